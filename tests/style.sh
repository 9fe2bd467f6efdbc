#!/bin/sh
# tests/style.sh - the tree's two mechanical rules (run by `make test`):
#   1. no file of sim/ or include/ over 1,200 lines, no test file over 1,500
#      (STYLE.md: split it behind a private header);
#   2. every C file is as clang-format 14 formats it with .clang-format
#      (`make format` fixes it).  Another clang-format version skips rule 2
#      with a message: versions differ in small ways;
#   3. no local struct gp_err without an initializer: it owns its message, and
#      its first setter frees the old one, so it must start empty ({0}).
# Prints one line per problem; exits 1 if any.
set -u
cd "$(dirname "$0")/.." || exit 1
files=$(git ls-files 'sim/*.[ch]' 'include/*.h' 'tests/*.[ch]' 'tests/fuzz/*.c' 2>/dev/null)
[ -n "$files" ] || files=$(ls sim/*.[ch] include/gpuplan/*.h tests/*.[ch] tests/fuzz/*.c 2>/dev/null)
bad=0
for f in $files; do
	n=$(wc -l <"$f")
	case $f in tests/*) cap=1500 ;; *) cap=1200 ;; esac
	if [ "$n" -gt "$cap" ]; then
		echo "$f: $n lines; the limit is $cap (split it behind a private header)"
		bad=1
	fi
done
for f in $files; do
	case $f in *.c) ;; *) continue ;; esac
	hits=$(grep -nE '^[[:space:]]+struct gp_err [a-z_0-9]+(, *[a-z_0-9]+)*;[[:space:]]*$' "$f")
	[ -z "$hits" ] && continue
	echo "$hits" | sed "s#^#$f:#; s#\$# (a gp_err starts empty: = {0}, GP_ERR_SCOPE for a local)#"
	bad=1
done
version=$(clang-format --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
	echo "style: skipping the format check: it needs clang-format 14 (found: ${version:-none})"
else
	for f in $files; do
		clang-format "$f" | cmp -s - "$f" || { echo "$f: not formatted (make format)"; bad=1; }
	done
fi
exit $bad
