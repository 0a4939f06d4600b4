package deploy

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// A small reader of PromQL, enough to find every metric selector of an expression with its
// label matchers (the Prometheus parser is a large module this repository does not need
// otherwise). It knows the language's functions, aggregations and keywords: any other name is
// a metric, so a misspelt function is reported as an unknown metric.

type matcher struct {
	Label, Op, Value string
}

type selector struct {
	Metric   string
	Matchers []matcher
}

var promFunctions = setOf(
	"abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
	"avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh",
	"count_over_time", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "deg",
	"delta", "deriv", "double_exponential_smoothing", "exp", "floor", "histogram_avg",
	"histogram_count", "histogram_fraction", "histogram_quantile", "histogram_stddev",
	"histogram_stdvar", "histogram_sum", "holt_winters", "hour", "idelta", "increase", "irate",
	"label_join", "label_replace", "last_over_time", "ln", "log10", "log2", "mad_over_time",
	"max_over_time", "min_over_time", "minute", "month", "pi", "predict_linear",
	"present_over_time", "quantile_over_time", "rad", "rate", "resets", "round", "scalar", "sgn",
	"sin", "sinh", "sort", "sort_by_label", "sort_by_label_desc", "sort_desc", "sqrt",
	"stddev_over_time", "stdvar_over_time", "sum_over_time", "tan", "tanh", "time", "timestamp",
	"vector", "year",
)

var promAggregations = setOf("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
	"count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio")

// Keywords followed by a parenthesised list of label names.
var promGrouping = setOf("by", "without", "on", "ignoring", "group_left", "group_right")

var promKeywords = setOf("and", "or", "unless", "bool", "offset", "atan2", "inf", "nan")

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

type promToken struct {
	Kind string // "ident", "string", "number", "punct"
	Text string
}

func promTokens(expr string) ([]promToken, error) {
	var out []promToken
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#': // comment to the end of the line
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			var s strings.Builder
			for ; j < len(expr) && expr[j] != c; j++ {
				if expr[j] == '\\' && c != '`' && j+1 < len(expr) {
					j++
				}
				s.WriteByte(expr[j])
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("unterminated string in %q", expr)
			}
			out = append(out, promToken{"string", s.String()})
			i = j + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9':
			j := i
			for j < len(expr) && (isAlnum(expr[j]) || expr[j] == '.' ||
				(expr[j] == '-' || expr[j] == '+') && (expr[j-1] == 'e' || expr[j-1] == 'E')) {
				j++
			}
			out = append(out, promToken{"number", expr[i:j]})
			i = j
		case isAlpha(c) || c == '_' || c == ':':
			j := i
			for j < len(expr) && (isAlnum(expr[j]) || expr[j] == '_' || expr[j] == ':') {
				j++
			}
			out = append(out, promToken{"ident", expr[i:j]})
			i = j
		case c == '$':
			return nil, fmt.Errorf("template variable in %q: not checked", expr)
		default:
			// Two-character operators first.
			if i+1 < len(expr) {
				two := expr[i : i+2]
				switch two {
				case "==", "!=", "<=", ">=", "=~", "!~":
					out = append(out, promToken{"punct", two})
					i += 2
					continue
				}
			}
			if !strings.ContainsRune("(){}[],+-*/%^<>=@", rune(c)) {
				return nil, fmt.Errorf("unexpected %q in %q", c, expr)
			}
			out = append(out, promToken{"punct", string(c)})
			i++
		}
	}
	return out, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// promSelectors returns the metric selectors of a PromQL expression.
func promSelectors(expr string) ([]selector, error) {
	toks, err := promTokens(expr)
	if err != nil {
		return nil, err
	}
	var out []selector
	skipParen := func(i int) (int, error) { // toks[i] is "(": return the index after its ")"
		depth := 0
		for j := i; j < len(toks); j++ {
			switch toks[j].Text {
			case "(":
				depth++
			case ")":
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unbalanced parentheses in %q", expr)
	}
	for i := 0; i < len(toks); {
		tk := toks[i]
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1].Text
		}
		switch {
		case tk.Kind == "punct" && tk.Text == "[":
			for i < len(toks) && toks[i].Text != "]" {
				i++
			}
			i++
		case tk.Kind == "punct" && tk.Text == "{":
			return nil, fmt.Errorf("selector without a metric name in %q", expr)
		case tk.Kind != "ident":
			i++
		case promGrouping[tk.Text]:
			i++
			if next == "(" {
				if i, err = skipParen(i); err != nil {
					return nil, err
				}
			}
		case promKeywords[strings.ToLower(tk.Text)]:
			i++
		case promAggregations[tk.Text]:
			i++
		case next == "(":
			if !promFunctions[tk.Text] {
				return nil, fmt.Errorf("unknown function %s in %q", tk.Text, expr)
			}
			i++
		default:
			sel := selector{Metric: tk.Text}
			i++
			if next == "{" {
				i++
				for i < len(toks) && toks[i].Text != "}" {
					if i+2 >= len(toks) || toks[i].Kind != "ident" || toks[i+2].Kind != "string" {
						return nil, fmt.Errorf("bad label matcher in %q", expr)
					}
					sel.Matchers = append(sel.Matchers, matcher{toks[i].Text, toks[i+1].Text, toks[i+2].Text})
					i += 3
					if i < len(toks) && toks[i].Text == "," {
						i++
					}
				}
				if i >= len(toks) {
					return nil, fmt.Errorf("unclosed { in %q", expr)
				}
				i++
			}
			out = append(out, sel)
		}
	}
	return out, nil
}

// builtinMetrics are series Prometheus makes itself, with their labels.
var builtinMetrics = map[string][]string{
	"up":     {},
	"ALERTS": {"alertname", "alertstate", "severity", "vehicle", "device", "reason"},
}

// targetLabels are the labels Prometheus adds to every series of a job (job, instance) and
// those a job's targets carry (the bridges' file_sd entries name their vehicle).
var targetLabels = map[string][]string{"bridge": {"vehicle"}}

// checkPromQL reports what is wrong with the selectors of expr: a metric no program registers,
// a label it does not have, a value its pre-initialised series never take, a job that
// prometheus.yml does not scrape.
func checkPromQL(expr string, jm jobMetrics, jobs map[string]bool) []string {
	sels, err := promSelectors(expr)
	if err != nil {
		return []string{err.Error()}
	}
	if len(sels) == 0 {
		return []string{fmt.Sprintf("no metric in %q", expr)}
	}
	var problems []string
	for _, s := range sels {
		// The jobs a selector can match.
		candidates := []string{}
		for _, m := range s.Matchers {
			if m.Label != "job" {
				continue
			}
			for _, v := range alternatives(m) {
				if !jobs[v] {
					problems = append(problems, fmt.Sprintf("%s: job %q is not scraped by prometheus.yml", s.Metric, v))
				}
			}
			if m.Op == "=" || m.Op == "=~" {
				candidates = append(candidates, alternatives(m)...)
			}
		}
		if len(candidates) == 0 {
			for j := range jm {
				candidates = append(candidates, j)
			}
		}
		if labels, ok := builtinMetrics[s.Metric]; ok {
			for _, m := range s.Matchers {
				if m.Label != "job" && m.Label != "instance" && !contains(labels, m.Label) && !anyTargetLabel(m.Label) {
					problems = append(problems, fmt.Sprintf("%s has no label %s", s.Metric, m.Label))
				}
			}
			continue
		}
		found := false
		for _, job := range candidates {
			mt, suffixLabel := lookupMetric(jm[job], s.Metric)
			if mt == nil {
				continue
			}
			found = true
			for _, m := range s.Matchers {
				if m.Label == "job" || m.Label == "instance" || m.Label == suffixLabel || contains(targetLabels[job], m.Label) {
					continue
				}
				if !mt.Labels[m.Label] {
					problems = append(problems, fmt.Sprintf("%s (job %s) has no label %s", s.Metric, job, m.Label))
					continue
				}
				if known := mt.Values[m.Label]; len(known) > 0 && m.Op != "!~" && m.Op != "!=" {
					for _, v := range alternatives(m) {
						if !known[v] {
							problems = append(problems, fmt.Sprintf("%s (job %s): label %s never takes the value %q", s.Metric, job, m.Label, v))
						}
					}
				}
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("metric %s is registered by no program (jobs %v)", s.Metric, candidates))
		}
	}
	return problems
}

// lookupMetric finds a metric by the name of one of its series: histogram and summary series
// carry _bucket (with le), _sum and _count.
func lookupMetric(ms map[string]*metric, name string) (*metric, string) {
	if m := ms[name]; m != nil {
		return m, ""
	}
	for suffix, label := range map[string]string{"_bucket": "le", "_sum": "", "_count": ""} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if m := ms[base]; m != nil && (!m.Typed || m.Type.String() == "HISTOGRAM" || (m.Type.String() == "SUMMARY" && suffix != "_bucket")) {
			return m, label
		}
	}
	return nil, ""
}

var literalAlternation = regexp.MustCompile(`^[A-Za-z0-9_.:-]+(\|[A-Za-z0-9_.:-]+)*$`)

// alternatives are the values a matcher names: "a" for ="a", a|b|c for =~"a|b|c" (nil for a
// regular expression that is not a plain alternation).
func alternatives(m matcher) []string {
	if m.Op == "=" || m.Op == "!=" {
		return []string{m.Value}
	}
	if literalAlternation.MatchString(m.Value) {
		return strings.Split(m.Value, "|")
	}
	return nil
}

func anyTargetLabel(l string) bool {
	for _, ls := range targetLabels {
		if contains(ls, l) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPromSelectors(t *testing.T) {
	for expr, want := range map[string]string{
		`up{job!="bridge"} == 0`: `up{job!="bridge"}`,
		`histogram_quantile(0.99, sum by (le) (rate(trenzinho_monitor_commit_seconds_bucket[5m]))) > 1`: `trenzinho_monitor_commit_seconds_bucket`,
		`sum(rate(a_total[5m])) / sum(rate(b_total[5m])) > 0.01`:                                        `a_total b_total`,
		`x == 0 and on (vehicle) (time() - y) < 7200 and on () (hour() >= 12 or hour() < 2)`:            `x y`,
		`sum by (reason) (increase(q{reason=~"a|b"}[15m])) > 1e-3`:                                      `q{reason=~"a|b"}`,
		`max by (vehicle, device) (d) offset 5m`:                                                        `d`,
	} {
		sels, err := promSelectors(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		var got []string
		for _, s := range sels {
			g := s.Metric
			if len(s.Matchers) > 0 {
				var ms []string
				for _, m := range s.Matchers {
					ms = append(ms, fmt.Sprintf("%s%s%q", m.Label, m.Op, m.Value))
				}
				g += "{" + strings.Join(ms, ",") + "}"
			}
			got = append(got, g)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: selectors %q, want %q", expr, got, want)
		}
	}
	for _, bad := range []string{`histogram_quantille(0.5, x)`, `{__name__="x"}`, `x{a=}`, `x{a="b"`} {
		if _, err := promSelectors(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
