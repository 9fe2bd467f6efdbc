#!/bin/sh
# tests/prefixes.sh - the external symbols of the build's objects against the
# prefix rule of docs/design.md ("Prefixes"):
#
#   tests/prefixes.sh [BUILD]   lists every name an object of sim/ exports
#                               (nm -g --defined-only BUILD/obj/F.o) that
#                               begins with neither its file's name (F_), nor
#                               its module's (the part of F before the first
#                               '_'), nor a prefix the map gives for F; and
#                               every row of the map that matches no name.
#                               Exits 1 if it lists anything.
#
# The map is the table after "### Prefixes": | `PREFIX` | `FILE.c` ... | what |,
# FILE.c a name or a shell pattern (scenario_*.c).
set -u
cd "$(dirname "$0")/.." || exit 1
# BUILD: the build directory; by default the first of build and build-asan
# (`make asan` alone builds only the second) that holds the objects.
build=${1:-}
if [ -z "$build" ]; then
	build=build
	[ -f build/obj/common.o ] || [ ! -f build-asan/obj/common.o ] || build=build-asan
fi
map=${GPUPLAN_PREFIX_MAP:-docs/design.md} # GPUPLAN_PREFIX_MAP: another map (the tests' own)
tmp=$(mktemp -d /tmp/gpuplan-prefixes-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# PREFIX PATTERN, one a line
awk -F'|' '/^### Prefixes/ { on = 1; next } on && /^#/ { exit }
	on && $2 ~ /^ `[a-z0-9_]+` $/ {
		p = $2; gsub(/[ `]/, "", p)
		n = split($3, f, " ")
		for (i = 1; i <= n; i++) { g = f[i]; gsub(/`/, "", g); if (g != "") print p, g }
	}' "$map" >"$tmp/map"
[ -s "$tmp/map" ] || { echo "prefixes: no rows after '### Prefixes' in $map"; exit 1; }

rc=0
for c in sim/*.c; do
	f=$(basename "$c" .c)
	o=$build/obj/$f.o
	[ -f "$o" ] || { echo "prefixes: $o missing: build first (make $o)"; rc=1; continue; }
	nm -g --defined-only "$o" | awk '$2 ~ /^[TDBRCV]$/ { print $3 }' |
		while read -r s; do echo "$f $s"; done
done >"$tmp/syms"
[ "$rc" -eq 0 ] || exit 1

awk -v mapfile="$tmp/map" '
function glob(g) { gsub(/\./, "\\.", g); gsub(/\*/, ".*", g); return "^" g "$" }
BEGIN { while ((getline l < mapfile) > 0) { split(l, a, " "); n++; pre[n] = a[1]; pat[n] = glob(a[2]); row[n] = l } }
{
	f = $1; s = $2; m = f; sub(/_.*/, "", m)
	if (s == f || s == "main" || index(s, f "_") == 1 || index(s, m "_") == 1) next
	for (i = 1; i <= n; i++)
		if ((f ".c") ~ pat[i] && index(s, pre[i]) == 1) { used[i] = 1; next }
	print "prefix: " s " (sim/" f ".c) begins with neither " (f == m ? "" : f "_ nor ") m "_ nor a prefix docs/design.md maps to it"
	bad = 1
}
END {
	for (i = 1; i <= n; i++)
		if (!(i in used)) { print "prefix: the row " row[i] " of docs/design.md matches no name"; bad = 1 }
	exit bad
}' "$tmp/syms"
