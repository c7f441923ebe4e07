// Command benchcmp times helexa against llama.cpp on the same GGUF files
// with the same threads, interleaved (helexa, llama.cpp, helexa, …) so
// that both are measured in one window, and prints a Markdown table of the
// medians and their ratios for BENCHMARKS.md:
//
//	go run ./scripts/benchcmp -helexa bin/helexa -llama-bench LLAMA/bin/llama-bench \
//	    -batched-bench LLAMA/bin/llama-batched-bench -t 2 -rounds 3 MODEL.gguf...
//
// Prefill is pp512 and decode tg128 (llama-bench's tests, helexa bench's
// llama-bench mode); the batched curve is helexa bench --streams against
// llama-batched-bench -npp 4 -ntg 128 -npl 1,2,4,8 (aggregate decode tok/s).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type options struct {
	helexa, llamaBench, batched string
	threads, rounds, p, n       int
	streams                     []int
}

func main() {
	var o options
	flag.StringVar(&o.helexa, "helexa", "bin/helexa", "helexa binary")
	flag.StringVar(&o.llamaBench, "llama-bench", "", "llama.cpp llama-bench binary (required)")
	flag.StringVar(&o.batched, "batched-bench", "", "llama.cpp llama-batched-bench binary (optional: the batched curve)")
	flag.IntVar(&o.threads, "t", 2, "threads of both engines")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds (medians over them)")
	flag.IntVar(&o.p, "p", 512, "prefill tokens")
	flag.IntVar(&o.n, "n", 128, "decode tokens")
	flag.Parse()
	o.streams = []int{1, 2, 4, 8}
	if o.llamaBench == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchcmp -llama-bench PATH [-batched-bench PATH] [-t 2] [-rounds 3] MODEL.gguf...")
		os.Exit(2)
	}
	for _, m := range flag.Args() {
		if err := compare(context.Background(), o, m, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "benchcmp %s: %v\n", m, err)
			os.Exit(1)
		}
	}
}

// samples collects one figure per round by test name.
type samples map[string][]float64

func (s samples) add(k string, v float64) { s[k] = append(s[k], v) }

func compare(ctx context.Context, o options, model string, w io.Writer) error {
	hx, ll := samples{}, samples{}
	for r := 0; r < o.rounds; r++ {
		fmt.Fprintf(os.Stderr, "%s: round %d/%d\n", filepath.Base(model), r+1, o.rounds)
		if err := runHelexa(ctx, o, model, hx); err != nil {
			return err
		}
		if err := runLlamaBench(ctx, o, model, ll); err != nil {
			return err
		}
		if o.batched != "" {
			if err := runBatched(ctx, o, model, ll); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(w, "\n### %s (%d threads, medians of %d interleaved rounds)\n\n", filepath.Base(model), o.threads, o.rounds)
	fmt.Fprintln(w, "| test | helexa tok/s | llama.cpp tok/s | helexa / llama.cpp |")
	fmt.Fprintln(w, "|---|---|---|---|")
	keys := make([]string, 0, len(hx))
	for k := range hx {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return order(keys[i]) < order(keys[j]) })
	for _, k := range keys {
		h := median(hx[k])
		l, ok := ll[k]
		if !ok {
			fmt.Fprintf(w, "| %s | %.1f | - | - |\n", k, h)
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f | **%.2f×** |\n", k, h, median(l), h/median(l))
	}
	return nil
}

// order sorts pp, tg, then the streams by their count.
func order(k string) int {
	switch {
	case strings.HasPrefix(k, "pp"):
		return 0
	case strings.HasPrefix(k, "tg"):
		return 1
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(k, "batched x"))
	return 10 + n
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func output(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func runHelexa(ctx context.Context, o options, model string, s samples) error {
	st := make([]string, len(o.streams))
	for i, n := range o.streams {
		st[i] = strconv.Itoa(n)
	}
	out, err := output(ctx, o.helexa, "bench", model, "-p", strconv.Itoa(o.p), "-n", strconv.Itoa(o.n), "-r", "1",
		"-t", strconv.Itoa(o.threads), "--streams", strings.Join(st, ","), "--json")
	if err != nil {
		return err
	}
	var rep struct {
		Prefill, Decode struct {
			Test string  `json:"test"`
			Mean float64 `json:"mean_tokens_per_s"`
		}
		Streams []struct {
			Concurrency int     `json:"concurrency"`
			Decode      float64 `json:"decode_tokens_per_s"`
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return fmt.Errorf("helexa bench --json: %w", err)
	}
	s.add(rep.Prefill.Test, rep.Prefill.Mean)
	s.add(rep.Decode.Test, rep.Decode.Mean)
	for _, x := range rep.Streams {
		s.add(fmt.Sprintf("batched x%d", x.Concurrency), x.Decode)
	}
	return nil
}

func runLlamaBench(ctx context.Context, o options, model string, s samples) error {
	out, err := output(ctx, o.llamaBench, "-m", model, "-t", strconv.Itoa(o.threads), "-p", strconv.Itoa(o.p),
		"-n", strconv.Itoa(o.n), "-r", "1", "-o", "csv")
	if err != nil {
		return err
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		return fmt.Errorf("llama-bench csv: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		ts, _ := strconv.ParseFloat(r[col["avg_ts"]], 64)
		if p := r[col["n_prompt"]]; p != "0" {
			s.add("pp"+p, ts)
		} else {
			s.add("tg"+r[col["n_gen"]], ts)
		}
	}
	return nil
}

func runBatched(ctx context.Context, o options, model string, s samples) error {
	st := make([]string, len(o.streams))
	for i, n := range o.streams {
		st[i] = strconv.Itoa(n)
	}
	out, err := output(ctx, o.batched, "-m", model, "-t", strconv.Itoa(o.threads), "-c", "4096", "-npp", "4",
		"-ntg", strconv.Itoa(o.n), "-npl", strings.Join(st, ","), "--output-format", "jsonl")
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			NPL int     `json:"pl"`
			STG float64 `json:"speed_tg"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.NPL > 0 {
			s.add(fmt.Sprintf("batched x%d", r.NPL), r.STG)
		}
	}
	return sc.Err()
}
