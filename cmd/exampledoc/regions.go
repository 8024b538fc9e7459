package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// The markers of a generated region. Both are HTML comments, so the rendered page
// shows only what is between them; a region may sit inside a sentence or a table
// cell, or span lines.
const (
	openMark  = "<!-- generated: "
	closeMark = "<!-- end -->"
)

// region is one generated span: the text between its markers is doc[start:end].
type region struct {
	name       string
	start, end int
}

// parseRegions finds every region, in order. Regions do not nest, and each name
// appears once.
func parseRegions(doc string) ([]region, error) {
	var out []region
	seen := map[string]bool{}
	line := func(at int) int { return strings.Count(doc[:at], "\n") + 1 }
	for at := 0; ; {
		open := strings.Index(doc[at:], openMark)
		stray := strings.Index(doc[at:], closeMark)
		if open < 0 {
			if stray >= 0 {
				return nil, fmt.Errorf("line %d: %s without a region", line(at+stray), closeMark)
			}
			return out, nil
		}
		if stray >= 0 && stray < open {
			return nil, fmt.Errorf("line %d: %s without a region", line(at+stray), closeMark)
		}
		open += at
		nameEnd := strings.Index(doc[open:], " -->")
		if nameEnd < 0 {
			return nil, fmt.Errorf("line %d: unterminated %q", line(open), openMark)
		}
		name := doc[open+len(openMark) : open+nameEnd]
		if name == "" || strings.ContainsAny(name, " \n") {
			return nil, fmt.Errorf("line %d: bad region name %q", line(open), name)
		}
		start := open + nameEnd + len(" -->")
		end := strings.Index(doc[start:], closeMark)
		if end < 0 {
			return nil, fmt.Errorf("line %d: region %s has no %s", line(open), name, closeMark)
		}
		end += start
		if inner := strings.Index(doc[start:end], openMark); inner >= 0 {
			other, _, _ := strings.Cut(doc[start+inner+len(openMark):end], " -->")
			return nil, fmt.Errorf("line %d: region %s opens inside region %s", line(start+inner), other, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("line %d: region %s appears twice", line(open), name)
		}
		seen[name] = true
		out = append(out, region{name: name, start: start, end: end})
		at = end + len(closeMark)
	}
}

// generator makes a region's text from runs; an error says which run failed or
// which sentence of the document the runs no longer bear out.
type generator func(*lab) (string, error)

// fill returns doc with every region's text made afresh by its generator. Every
// region must have a generator and every generator a region, so no figure is left
// unwritten and none is computed for nothing. Generators run side by side; their runs
// are deterministic, so the order they finish in does not matter.
func fill(doc string, gens map[string]generator, l *lab) (string, error) {
	regions, err := parseRegions(doc)
	if err != nil {
		return "", err
	}
	used := map[string]bool{}
	for _, r := range regions {
		if gens[r.name] == nil {
			return "", fmt.Errorf("region %s: no such figure", r.name)
		}
		used[r.name] = true
	}
	var missing []string
	for name := range gens {
		if !used[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("no region for %s", strings.Join(missing, ", "))
	}
	texts, errs := make([]string, len(regions)), make([]error, len(regions))
	var wg sync.WaitGroup
	for i, r := range regions {
		wg.Go(func() { texts[i], errs[i] = gens[r.name](l) })
	}
	wg.Wait()
	b := &strings.Builder{}
	at := 0
	for i, r := range regions {
		if errs[i] != nil {
			return "", fmt.Errorf("region %s: %w", r.name, errs[i])
		}
		b.WriteString(doc[at:r.start])
		b.WriteString(texts[i])
		at = r.end
	}
	b.WriteString(doc[at:])
	return b.String(), nil
}
