package hub

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Format of a model's weights.
const (
	FormatGGUF        = "gguf"
	FormatSafetensors = "safetensors"
)

var (
	quantTokenRe = regexp.MustCompile(`(?i)(?:^|[-_.])((?:UD-)?(?:IQ4_NL_4_[48]|IQ[1-4]_(?:XXS|XS|S|M|NL)|Q[2-8]_K(?:_(?:XL|S|M|L))?|Q4_0_[48]_[48]|Q[4-8]_[01]|TQ[12]_0|BF16|F16|FP16|F32|MXFP4(?:_MOE)?))(?:[-_.]|$)`)
	splitRe      = regexp.MustCompile(`-(\d{5})-of-(\d{5})\.gguf$`)
)

// quantPreference is the order used when no quant was asked for.
func quantPreference() []string {
	return []string{
		"Q4_K_M", "Q4_K_S", "Q5_K_M", "Q4_0", "Q5_K_S", "Q4_1", "Q5_0", "Q5_1", "IQ4_XS", "IQ4_NL",
		"Q6_K", "Q8_0", "Q3_K_L", "Q3_K_M", "Q3_K_S", "BF16", "F16", "Q2_K", "F32",
	}
}

// isSafetensorsSideFile reports the non-weight files fetched for a
// safetensors repo.
func isSafetensorsSideFile(f string) bool {
	switch f {
	case "config.json", "generation_config.json", "tokenizer.json",
		"tokenizer_config.json", "special_tokens_map.json", "model.safetensors.index.json":
		return true
	}
	return false
}

// QuantOf returns the quant label in a GGUF file name (upper case), or "".
func QuantOf(file string) string {
	base := splitRe.ReplaceAllString(path.Base(file), ".gguf")
	base = strings.TrimSuffix(base, path.Ext(base))
	m := quantTokenRe.FindAllStringSubmatch(base, -1)
	if len(m) == 0 {
		return ""
	}
	q := strings.ToUpper(m[len(m)-1][1])
	if q == "FP16" {
		q = "F16"
	}
	return q
}

// isGGUFWeight reports whether a repo file is a GGUF language-model file
// (vision projectors are skipped).
func isGGUFWeight(f string) bool {
	b := strings.ToLower(path.Base(f))
	return strings.HasSuffix(b, ".gguf") && !strings.HasPrefix(b, "mmproj")
}

// selection is the set of files one reference needs.
type selection struct {
	Format    string
	Quant     string
	Files     []string // in download order; for GGUF the first is the model (first shard)
	AutoQuant bool     // the quant was chosen because none was given
	Note      string   // human-readable explanation of an automatic choice
}

// selectFiles picks what to download from a repo's file list.
func selectFiles(repo string, files []string, quant string) (selection, error) {
	var ggufs []string
	hasST := false
	for _, f := range files {
		if isGGUFWeight(f) {
			ggufs = append(ggufs, f)
		}
		if strings.HasSuffix(f, ".safetensors") && !strings.Contains(f, "/") {
			hasST = true
		}
	}
	if len(ggufs) > 0 {
		return selectGGUF(repo, ggufs, quant)
	}
	if hasST {
		if quant != "" {
			return selection{}, fmt.Errorf("%s is a safetensors repository: it has no GGUF quants, so %q cannot be selected; drop the :%s", repo, quant, quant)
		}
		return selectSafetensors(files), nil
	}
	return selection{}, fmt.Errorf("%w in %s: no .gguf or .safetensors files (it has %d files)", ErrNoWeights, repo, len(files))
}

func selectSafetensors(files []string) selection {
	sel := selection{Format: FormatSafetensors}
	for _, f := range files {
		if strings.Contains(f, "/") {
			continue
		}
		if isSafetensorsSideFile(f) || strings.HasSuffix(f, ".safetensors") {
			sel.Files = append(sel.Files, f)
		}
	}
	sort.Strings(sel.Files)
	return sel
}

// quantGroups maps each quant label to its GGUF files (a single file or the
// shards of a split model).
func quantGroups(ggufs []string) map[string][]string {
	g := map[string][]string{}
	for _, f := range ggufs {
		q := QuantOf(f)
		if q == "" {
			q = strings.TrimSuffix(splitRe.ReplaceAllString(path.Base(f), ".gguf"), ".gguf")
		}
		g[q] = append(g[q], f)
	}
	for _, fs := range g {
		sort.Strings(fs)
	}
	return g
}

func selectGGUF(repo string, ggufs []string, quant string) (selection, error) {
	groups := quantGroups(ggufs)
	labels := make([]string, 0, len(groups))
	for q := range groups {
		labels = append(labels, q)
	}
	sort.Strings(labels)
	sel := selection{Format: FormatGGUF}
	switch {
	case quant != "":
		q, err := matchQuant(repo, quant, groups, labels)
		if err != nil {
			return sel, err
		}
		sel.Quant = q
	case len(labels) == 1:
		sel.Quant, sel.AutoQuant = labels[0], true
		sel.Note = fmt.Sprintf("no quant given; %s has only %s", repo, labels[0])
	default:
		sel.Quant, sel.AutoQuant = defaultQuant(labels), true
		if sel.Quant == "Q4_K_M" {
			sel.Note = fmt.Sprintf("no quant given; picked Q4_K_M (available: %s)", strings.Join(labels, ", "))
		} else {
			sel.Note = fmt.Sprintf("no quant given and %s has no Q4_K_M; picked %s (available: %s)", repo, sel.Quant, strings.Join(labels, ", "))
		}
	}
	files, err := completeSplit(repo, groups[sel.Quant])
	if err != nil {
		return sel, err
	}
	sel.Files = files
	return sel, nil
}

func matchQuant(repo, want string, groups map[string][]string, labels []string) (string, error) {
	if hasLabel(labels, want) {
		for _, q := range labels {
			if strings.EqualFold(q, want) {
				return q, nil
			}
		}
	}
	var ud []string // Unsloth dynamic quants: "UD-Q4_K_XL" answers to "Q4_K_XL"
	for _, q := range labels {
		if strings.EqualFold(strings.TrimPrefix(q, "UD-"), want) {
			ud = append(ud, q)
		}
	}
	if len(ud) == 1 {
		return ud[0], nil
	}
	// A part of a file name (e.g. a label with no standard quant token).
	var hits []string
	for _, q := range labels {
		for _, f := range groups[q] {
			if strings.Contains(strings.ToLower(path.Base(f)), strings.ToLower(want)) {
				hits = append(hits, q)
				break
			}
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	qe := &QuantError{Repo: repo, Want: want, Available: labels}
	if len(hits) > 1 {
		qe.Ambiguous = hits
	}
	return "", qe
}

func hasLabel(labels []string, want string) bool {
	for _, l := range labels {
		if strings.EqualFold(l, want) {
			return true
		}
	}
	return false
}

func defaultQuant(labels []string) string {
	for _, p := range quantPreference() {
		if hasLabel(labels, p) {
			return p
		}
	}
	// Unknown labels only: the first in sorted order.
	return labels[0]
}

// completeSplit checks that a split GGUF has every shard and returns the
// shards in order (first shard first).
// pickHint says how to load one of several GGUF files sharing a quant:
// by its path, for a local directory; a Hub repository's file must be
// downloaded first.
func pickHint(repo, file string) string {
	if fi, err := os.Stat(repo); err == nil && fi.IsDir() {
		return "give the file's path instead of the directory, e.g. " + filepath.Join(repo, file)
	}
	return "download the file you want (for example with huggingface-cli download) and give its path"
}

func completeSplit(repo string, files []string) ([]string, error) {
	if len(files) == 1 && !splitRe.MatchString(files[0]) {
		return files, nil
	}
	var total int
	have := map[int]string{}
	for _, f := range files {
		m := splitRe.FindStringSubmatch(f)
		if m == nil {
			return nil, fmt.Errorf("%w: %s has several GGUF files of one quant that are not the shards of a split model (%s), so helexa cannot tell which to load; %s",
				ErrBadReference, repo, strings.Join(files, ", "), pickHint(repo, files[0]))
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if total != 0 && n != total {
			return nil, fmt.Errorf("%s: split GGUF shards disagree on the shard count (%s)", repo, strings.Join(files, ", "))
		}
		total = n
		have[i] = f
	}
	out := make([]string, 0, total)
	for i := 1; i <= total; i++ {
		f, ok := have[i]
		if !ok {
			return nil, fmt.Errorf("%s: split GGUF is missing shard %d of %d (have %s)", repo, i, total, strings.Join(files, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}
