#!/usr/bin/env bash
# ab-medians.sh LOG: the medians of an interleaved A/B log of helexa bench
# runs (scripts/gpu-ab.sh's ab.log: "== WHICH MODEL round N" headers, then
# bench's pp512 and tg128 rows and the aggregate decode rows of its
# streams), one line per model, test and runner: every round's tok/s and
# their median. Plain awk and sort, as a GPU machine has them.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 AB-LOG" >&2; exit 2; }
awk '
	/^== / { which = $2; model = $3; next }
	$1 == "pp512" || $1 == "tg128" { print model, $1, which, $2; next }
	$1 ~ /^[0-9]+$/ && NF >= 3 { print model, "x" $1, which, $2 }
' "$1" | sort -k1,1 -k2,2 -k3,3 -s | awk '
	function flush(   i, j, t, m, list) {
		if (n == 0) return
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		list = ""
		for (i = 1; i <= n; i++) list = list (i > 1 ? " / " : "") r[i]
		printf "%-22s %-6s %-10s %10.1f   (%s)\n", km, kt, kw, m, list
		n = 0
	}
	{
		if ($1 != km || $2 != kt || $3 != kw) { flush(); km = $1; kt = $2; kw = $3 }
		n++; v[n] = $4 + 0; r[n] = $4
	}
	END { flush() }
'
