#!/bin/sh
# tests/layers.sh - the #include lines of sim/ and include/gpuplan/ against the
# layer map of docs/design.md ("| L3 | engine | ..." rows).
#
#   tests/layers.sh          prints every include that goes up a layer, every
#                            pair of modules that include each other, and every
#                            module the map does not place; exits 1 if any is not
#                            one of the known exceptions that docs/design.md lists
#                            (the ```text block after "Where the includes differ");
#                            and every file of sim/ the map's page does not name
#                            (a module's main file is named by its row), and every
#                            row with no file; exits 1 if there is any
#
# A file belongs to the module of its name; a private file of a module
# (scenario_pools.c, scenario_int.h) to the module before the first '_'.
set -u
cd "$(dirname "$0")/.." || exit 1
map=${GPUPLAN_LAYER_MAP:-docs/design.md} # GPUPLAN_LAYER_MAP: another map (the tests' own)
tmp=$(mktemp -d /tmp/gpuplan-layers-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

awk -F'|' '$2 ~ /^ L[0-9] $/ { gsub(/ /, "", $2); gsub(/[ `]/, "", $3); print $3, substr($2, 2) }' \
	"$map" >"$tmp/layers"

for f in sim/*.c sim/*.h include/gpuplan/*.h; do
	[ -f "$f" ] || continue
	m=$(basename "$f"); m=${m%.*}
	grep -o '#include "gpuplan/[a-z0-9_]*\.h"' "$f" | sed 's/.*gpuplan\/\(.*\)\.h"/\1/' |
		while read -r d; do echo "$f $m $d"; done
	grep -o '#include "[a-z0-9_]*\.h"' "$f" | sed 's/#include "\(.*\)\.h"/\1/' |
		while read -r d; do echo "$f $m $d"; done
done | awk -v mapfile="$tmp/layers" -v map="$map" '
BEGIN { while ((getline l < mapfile) > 0) { split(l, a, " "); layer[a[1]] = a[2] } }
function module(n,   p) {
	if (n in layer) return n
	p = n; sub(/_.*/, "", p)
	return (p in layer) ? p : n
}
{
	from = module($2); to = module($3)
	if (from == to) next
	if (!(from in layer)) { unplaced[from] = $1; next }
	if (!(to in layer)) { unplaced[to] = $1; next }
	if (layer[to] + 0 > layer[from] + 0)
		print "up: " $1 " (" from ", L" layer[from] ") includes " to " (L" layer[to] ")"
	edge[from " " to] = 1
}
END {
	for (e in edge) {
		split(e, p, " ")
		if ((p[2] " " p[1]) in edge && p[1] < p[2]) print "mutual: " p[1] " <-> " p[2]
	}
	for (m in unplaced) print "no layer: " m " (" unplaced[m] "): add a row to " map
}' | sort >$tmp/layers.out
awk '/^Where the includes differ/ { on = 1 } on && /^```text/ { inside = 1; next }
	inside && /^```/ { exit } inside { print }' "$map" >$tmp/layers.known
rc=0
while read -r v; do
	grep -qxF "$v" $tmp/layers.known || { echo "$v"; rc=1; }
done <$tmp/layers.out
while read -r v; do
	grep -qxF "$v" $tmp/layers.out ||
		echo "fixed: $v (remove it from the list in $map)"
done <$tmp/layers.known

# Files against the page: each named, each row a module with files.
for f in sim/*.c sim/*.h; do
	b=$(basename "$f")
	grep -qx "${b%.*} [0-9]" "$tmp/layers" && continue
	grep -q "\b$b\b" "$map" || { echo "unnamed: $f: name it in $map"; rc=1; }
done
while read -r m l; do
	[ -f "sim/$m.c" ] || ls sim/"$m"_*.c >/dev/null 2>&1 ||
		{ echo "no file: the row of $m (L$l) in $map"; rc=1; }
done <"$tmp/layers"
# A private header that lists its module's files (" *   FILE.c  what it holds"
# lines in its opening comment) lists them all.
for h in sim/*_int.h; do
	grep -qE '^ \*   [a-z0-9_]+\.c ' "$h" || continue
	m=$(basename "$h"); m=${m%_int.h}
	for c in sim/"$m".c sim/"$m"_*.c; do
		[ -f "$c" ] || continue
		grep -qE "^ \*   $(basename "$c") " "$h" ||
			{ echo "unlisted: $c in the file list of $h"; rc=1; }
	done
done

exit $rc
