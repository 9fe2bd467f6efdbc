#!/bin/sh
# tests/docs.sh - checks that README.md and docs/*.md say what the program does.
#
#   tests/docs.sh            what the test suite runs (test_docs.c), from the top of the checkout
#   tests/docs.sh --diff     also compare every output shown in README.md with the real one
#   tests/docs.sh --diff FILE.md...   the same for the console blocks of other pages
#   tests/docs.sh --update FILE.md... rewrite the outputs shown with the real ones,
#                            except those with a "..." line (refresh those by hand)
#
# 1. Every `gpuplan COMMAND` named in a page (in a fenced block, or in an
#    inline code span that starts with gpuplan) is a command of `bin/gpuplan
#    --help`, and each of its --flags appears in `bin/gpuplan COMMAND --help`.
# 2. Every relative link of a page names a file that exists.
# 3. No page, source, test or script refers to a design file outside the
#    repository (the design lives in docs/design.md).
# 4. docs/results.md lists every table of a results database with its
#    columns, in order.
# 5. The ```console blocks of README.md (and, with --diff, of the pages named)
#    run in order in a scratch folder that links bin/, scenarios/, tests/ and models/:
#    every `$ ` line is a command (continued by a trailing backslash or an open
#    quote); it must exit 0, or 2 when the output shown for it has "error:";
#    and every metric the runs wrote must be described in docs/results.md.
#    With --diff, the output shown must be the real one, except that a line
#    "..." stands for any lines and wall-clock times ("in 0.008 s", "(0.3 s)")
#    are not compared.  Blocks that must not run (a kill, a cluster) are
#    fenced as ```text or ```sh.
# Prints one line per problem, FILE:LINE: what is wrong; exits 1 if any.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=bin/gpuplan
[ -x "$BIN" ] || { echo "tests/docs.sh: $BIN is missing (make all)"; exit 1; }

diff_mode=0
update=0
case "${1:-}" in
--diff) diff_mode=1; shift ;;
--update) diff_mode=1; update=1; shift ;;
esac
run_pages=${*:-README.md}
# GPUPLAN_DOCS_PAGES replaces the pages checked (test_docs.c checks the checker).
pages=${GPUPLAN_DOCS_PAGES:-README.md $(ls docs/*.md 2>/dev/null)}
results_page=${GPUPLAN_DOCS_RESULTS:-docs/results.md} # and GPUPLAN_DOCS_RESULTS the schema page
work=$(mktemp -d /tmp/gpuplan-docs-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
fail=0
problem() { echo "$1"; fail=1; }

# --- 1. commands and flags ---------------------------------------------------
"$BIN" --help >"$work/help" 2>&1
awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' "$work/help" >"$work/commands"
for c in $(cat "$work/commands"); do
	"$BIN" "$c" --help >"$work/help.$c" 2>&1
done

# Prints FILE:LINE:COMMAND FLAG... for every gpuplan command line of a page.
extract_commands() {
	awk -v file="$1" '
	function scan(s,   i, ch, out, tok, q, depth, n) {
		# Quote-aware: cut at an unquoted | ; & > < outside brackets, keep --flags.
		q = ""; depth = 0; out = ""; tok = ""
		for (i = 1; i <= length(s) + 1; i++) {
			ch = (i <= length(s)) ? substr(s, i, 1) : " "
			if (q != "") { if (ch == q) q = ""; continue }
			if (ch == "\047" || ch == "\"") { q = ch; continue }
			if (ch == "(" || ch == "[") depth++
			if (ch == ")" || ch == "]") depth--
			if (depth <= 0 && (ch == "|" || ch == ";" || ch == "&" || ch == ">" || ch == "<")) break
			if (ch == " " || ch == "\t") {
				if (tok != "") out = out " " tok
				tok = ""
			} else tok = tok ch
		}
		if (tok != "") out = out " " tok
		n = split(out, w, " "); out = ""
		for (i = 1; i <= n; i++) {
			gsub(/^[\[\(]+/, "", w[i]); gsub(/[\]\),.:]+$/, "", w[i])
			sub(/=.*/, "", w[i])
			if (i == 1 || w[i] ~ /^--[a-z][a-z0-9-]*$/) out = out " " w[i]
		}
		return out
	}
	function report(s, line,   rest) {
		while (match(s, /(^|[^A-Za-z0-9_.\/-])(bin\/)?gpuplan [a-z]/)) {
			rest = substr(s, RSTART + RLENGTH - 1)
			print file ":" line ":" scan(rest)
			s = rest
		}
	}
	/^[ \t]*```/ { fence = !fence; next }
	fence {
		if (held != "") { s = held " " $0; line = held_line } else { s = $0; line = NR }
		if (s ~ /\\$/) { held = substr(s, 1, length(s) - 1); held_line = line; next }
		held = ""
		report(s, line); next
	}
	{
		n = split($0, part, "`")
		for (i = 2; i <= n; i += 2)
			if (part[i] ~ /^(bin\/)?gpuplan [a-z]/) report(part[i], NR)
	}' "$1"
}

for page in $pages; do
	extract_commands "$page"
done >"$work/uses"
while IFS= read -r use; do
	where=${use%%:* *}; where=${use%:*}
	set -- ${use##*:}
	cmd=$1; shift
	if ! grep -qx "$cmd" "$work/commands"; then
		problem "$where: 'gpuplan $cmd' is not a command of '$BIN --help'"
		continue
	fi
	for flag in "$@"; do
		[ "$flag" = "--help" ] && continue
		grep -q -- "$flag\\b" "$work/help.$cmd" ||
			problem "$where: 'gpuplan $cmd $flag': no such option in '$BIN $cmd --help'"
	done
done <"$work/uses"

# --- 2. relative links ---------------------------------------------------------
for page in $pages; do
	dir=$(dirname "$page")
	# a relative target ends at ) or #; a URL's scheme (https:) is not one
	grep -no '](\([^)#: ]*\)[)#]' "$page" | sed 's/](\(.*\).$/\1/' | while IFS=: read -r line target; do
		[ -z "$target" ] && continue
		[ -e "$dir/$target" ] || echo "$page:$line: the link to $target names no file"
	done
done >"$work/links"
[ -s "$work/links" ] && { cat "$work/links"; fail=1; }

# --- 3. no design file outside the repository ----------------------------------
grep -rnI -e 'DESIGN\.md' -e 'shared/STYLE' README.md docs sim include tests scenarios \
	results/queries.sql Makefile .ci 2>/dev/null | grep -v '^tests/docs.sh:' >"$work/design"
if [ -s "$work/design" ]; then
	sed 's/$/  <- refers to a design file outside the repository (use docs\/design.md)/' "$work/design"
	fail=1
fi

# --- 4. the results schema as docs/results.md lists it -------------------------
if [ -f "$results_page" ]; then
	"$BIN" run scenarios/eval-window.yaml --quiet --db "$work/schema.db" >/dev/null 2>&1 ||
		problem "tests/docs.sh: could not write a results database to compare with docs/results.md"
	for t in $(sqlite3 "$work/schema.db" "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name"); do
		# table_xinfo: generated columns too (job_rows' run_id and job_id)
		real=$(sqlite3 "$work/schema.db" "SELECT group_concat(name, ' ') FROM pragma_table_xinfo('$t')")
		# | table | col, col (a note), col: what it is |
		row=$(grep "^| $t |" "$results_page" | head -n 1)
		shown=$(echo "$row" | awk -F'|' '{ print $3 }' | sed -e 's/([^)]*)//g' -e 's/:.*//' -e 's/`//g' |
			tr ',' '\n' | awk '{ print $1 }' | grep . | tr '\n' ' ' | sed 's/ $//')
		[ "$shown" = "$real" ] ||
			problem "$results_page: table $t has columns '$real'; the page lists '${shown:-nothing}'"
	done
fi

# --- 5. the console blocks run -------------------------------------------------
# Splits a page's ```console blocks into numbered commands: cmd.N (the command),
# out.N (the output shown), line.N (its line in the page), range.N (the lines
# of the output shown: FIRST LAST, LAST = FIRST - 1 when none is shown).
split_console() {
	awk -v dir="$2" '
	function quotes_open(s,   i, ch, q) {
		q = ""
		for (i = 1; i <= length(s); i++) {
			ch = substr(s, i, 1)
			if (q != "") { if (ch == q) q = ""; continue }
			if (ch == "\047" || ch == "\"") q = ch
		}
		return q != ""
	}
	/^```console/ { block = 1; next }
	/^```/ && block { block = 0; cont = 0; if (pending) print from, NR - 1 > (dir "/range." n); pending = 0; next }
	!block { next }
	cont { print $0 > (dir "/cmd." n); cmd = cmd "\n" $0
	       cont = ($0 ~ /\\$/) || quotes_open(cmd); if (!cont) from = NR + 1; next }
	/^\$ / { if (pending) print from, NR - 1 > (dir "/range." n)
	         pending = 1; n++; cmd = substr($0, 3); print cmd > (dir "/cmd." n); print NR > (dir "/line." n)
	         printf "" > (dir "/out." n)
	         cont = ($0 ~ /\\$/) || quotes_open(cmd); if (!cont) from = NR + 1; next }
	n { print $0 > (dir "/out." n) }' "$1"
}

# Wall-clock figures differ from run to run; everything else must not.
normalize() {
	sed -e 's/ in [0-9.]* s / in N s /' -e 's/ ([0-9.]* s)$/ (N s)/' -e 's/[ \t]*$//' "$1"
}

# Compares shown with real: a shown line "..." matches any lines up to the next
# shown line.  Prints the first difference.
compare() {
	normalize "$1" >"$1.n"; normalize "$2" >"$2.n"
	awk 'NR == FNR { want[++w] = $0; next } { got[++g] = $0 }
	END {
		i = 1; j = 1
		while (i <= w) {
			if (want[i] == "...") {
				i++
				if (i > w) exit 0
				while (j <= g && got[j] != want[i]) j++
				if (j > g) { print "  shown: " want[i]; print "  but no such line follows"; exit 1 }
				continue
			}
			if (j > g || got[j] != want[i]) {
				print "  shown line " i ": " want[i]; print "  real:         " (j <= g ? got[j] : "(end of output)"); exit 1
			}
			i++; j++
		}
		if (j <= g) { print "  real output goes on: " got[j]; exit 1 }
	}' "$1.n" "$2.n"
}

for page in $run_pages; do
	pw="$work/run.$(echo "$page" | tr '/.' '__')"
	mkdir -p "$pw/cmds" "$pw/here/results"
	for d in bin scenarios tests models; do ln -s "$PWD/$d" "$pw/here/$d"; done
	split_console "$page" "$pw/cmds"
	# A page that replays the real traces runs only where they are.
	if [ ! -d ../shared/data ]; then
		needs=$(cat "$pw"/cmds/cmd.* 2>/dev/null | tr ' ' '\n' | grep '\.yaml$' | sort -u |
			while read -r f; do [ -f "$f" ] && grep -l '^[^#]*shared/data' "$f"; done)
		if [ -n "$needs" ]; then
			echo "$page: not run: it replays ../shared/data, which is missing ($needs)"
			continue
		fi
	fi
	i=1
	while [ -f "$pw/cmds/cmd.$i" ]; do
		line=$(cat "$pw/cmds/line.$i")
		(cd "$pw/here" && sh "$pw/cmds/cmd.$i") >"$pw/got.$i" 2>&1
		rc=$?
		want=0
		grep -q 'error:' "$pw/cmds/out.$i" && want=2
		if [ "$rc" -ne "$want" ]; then
			problem "$page:$line: exit code $rc, expected $want: $(head -c 300 "$pw/cmds/cmd.$i")"
			sed 's/^/  | /' "$pw/got.$i" | head -5
		elif [ "$diff_mode" -eq 1 ] && ! compare "$pw/cmds/out.$i" "$pw/got.$i" >"$pw/diff.$i"; then
			if [ "$update" -eq 1 ] && ! grep -qx '\.\.\.' "$pw/cmds/out.$i"; then
				sed 's/[ \t]*$//' "$pw/got.$i" >"$pw/new.$i"
				echo "$(cat "$pw/cmds/range.$i") $pw/new.$i" >>"$pw/updates"
				echo "$page:$line: output updated: $(head -n 1 "$pw/cmds/cmd.$i")"
			else
				problem "$page:$line: the output shown is not the real one: $(head -n 1 "$pw/cmds/cmd.$i")"
				cat "$pw/diff.$i"
			fi
		fi
		i=$((i + 1))
	done
	# Every metric the page's runs wrote is described in docs/results.md.
	find "$pw/here" -name '*.db' 2>/dev/null | while read -r db; do
		sqlite3 "$db" "SELECT DISTINCT name FROM metrics" 2>/dev/null
	done | sort -u | while read -r m; do
		grep -qw -- "$m" "$results_page" || echo "$results_page: metric $m (written by the commands of $page) is not described"
	done >"$pw/metrics"
	[ -s "$pw/metrics" ] && { cat "$pw/metrics"; fail=1; }
	# Each update replaces lines FIRST..LAST of the page with a file.
	if [ -s "$pw/updates" ]; then
		awk 'NR == FNR { from[$1] = $1; to[$1] = $2; src[$1] = $3; next }
		FNR in from {
			while ((getline l < src[FNR]) > 0) print l
			close(src[FNR]); skip = to[FNR]
		}
		FNR <= skip { next }
		{ print }' "$pw/updates" "$page" >"$pw/page" && cat "$pw/page" >"$page"
	fi
done

exit $fail
