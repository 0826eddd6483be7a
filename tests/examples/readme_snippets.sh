#!/bin/sh
# readme_snippets.sh — compile and link every ```c block of a Markdown file (make check-readme).
#   CC=cc CFLAGS="-Iapi ..." LIBS="build/librmx.a ..." \
#     sh tests/examples/readme_snippets.sh README.md
# The convention: a block fenced with ```c is a whole program (includes, main), so a reader can
# copy it into a file and build it; code that is not meant to be built goes in a block tagged
# otherwise (```sh, ```text, or none).  A block that does not compile is reported with the line
# of its opening fence, and the exit status is 1.
set -u
md=${1:?usage: readme_snippets.sh FILE.md}
: "${CC:=cc}" "${CFLAGS:=}" "${LIBS:=}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rmx_snippets.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# Each block to $tmp/LINE.c (LINE: its opening fence), behind a #line directive so that the
# compiler's messages name the file and line of the Markdown source; an unclosed block is an error.
awk -v dir="$tmp" '
    !inside && /^```c[ \t]*$/ {
        inside = 1; start = NR; out = dir "/" NR ".c"
        printf "#line %d \"%s\"\n", NR + 1, FILENAME > out; next
    }
    inside && /^```[ \t]*$/   { inside = 0; close(out); next }
    inside                    { print > out }
    END {
        if (inside) {
            printf "%s:%d: this ```c block is never closed\n", FILENAME, start > "/dev/stderr"
            exit 1
        }
    }
' "$md" || exit 1

blocks=0 failed=0
for line in $(ls "$tmp" | sed -n 's/\.c$//p' | sort -n); do
    src=$tmp/$line.c
    blocks=$((blocks + 1))
    # $CFLAGS and $LIBS are word lists on purpose.
    if ! $CC $CFLAGS -o "$tmp/prog" "$src" $LIBS > "$tmp/log" 2>&1; then
        echo "$md:$line: this \`\`\`c block does not compile and link:"
        cat "$tmp/log"
        failed=$((failed + 1))
    fi
done
if [ "$blocks" = 0 ]; then
    echo "$md: no \`\`\`c block found (expected at least the usage example)"
    exit 1
fi
echo "$md: $((blocks - failed)) of $blocks \`\`\`c blocks compile and link"
[ "$failed" = 0 ]
