package report

import (
	"fmt"
	"slices"

	"trafficlab/result"
)

// callGraph is the page's drawing of who calls whom: the clients on the left, each
// service one column right of its furthest caller, a line per call whose width is
// its rate and whose colour is its share of calls that failed after their retries.
type callGraph struct {
	W, H  int
	Nodes []graphNode
	Edges []graphEdge
}

type graphNode struct {
	X, Y, W, H int
	TX, TY     int // where its name is written
	Name       string
	Client     bool
	Title      string
}

type graphEdge struct {
	D     string // the path
	Width string
	Class string // ok, some (under 1 % failed) or bad
	Title string
}

const (
	nodeW, nodeH   = 140, 30
	colGap, rowGap = 90, 18
	margin         = 10
)

// link is one line of the graph: a client's requests or a service's calls.
type link struct {
	from, to         string
	requests, failed int64
	p99              float64 // -1: not known (one of several clients)
	retries          int64
}

// graphOf lays r's calls out; nil when no service calls another.
func graphOf(r *result.Result) *callGraph {
	if len(r.Edges) == 0 {
		return nil
	}
	links := graphLinks(r)
	isClient := map[string]bool{}
	for _, c := range r.Clients {
		isClient[c.Name] = true
	}
	col, order := graphColumns(links, isClient)
	// A call that skips columns arcs over the boxes between: room above for it.
	top := margin
	for _, l := range links {
		if col[l.to]-col[l.from] > 1 {
			top = margin + nodeH + rowGap
		}
	}
	g := &callGraph{}
	pos := map[string]int{}
	rows := map[int]int{}
	for _, n := range order {
		c := col[n]
		x, y := margin+c*(nodeW+colGap), top+rows[c]*(nodeH+rowGap)
		rows[c]++
		pos[n] = len(g.Nodes)
		g.Nodes = append(g.Nodes, graphNode{X: x, Y: y, W: nodeW, H: nodeH, TX: x + nodeW/2, TY: y + nodeH/2 + 5,
			Name: n, Client: isClient[n], Title: nodeTitle(r, n, isClient[n])})
		g.W = max(g.W, x+nodeW+margin)
		g.H = max(g.H, y+nodeH+margin)
	}
	most := slices.MaxFunc(links, func(a, b link) int { return int(a.requests - b.requests) }).requests
	for _, l := range links {
		g.Edges = append(g.Edges, graphLine(r, l, g.Nodes[pos[l.from]], g.Nodes[pos[l.to]], col[l.to]-col[l.from] > 1, most))
	}
	return g
}

// graphLinks are the clients' requests, then the services' calls.
func graphLinks(r *result.Result) []link {
	var links []link
	for _, c := range r.Clients {
		p99 := -1.0
		if len(r.Clients) == 1 {
			p99 = r.LatencyMS.P99
		}
		links = append(links, link{from: c.Name, to: c.Target, requests: c.Requests + c.Errors, failed: c.Errors, p99: p99})
	}
	for _, e := range r.Edges {
		links = append(links, link{from: e.From, to: e.To, requests: e.Requests, failed: e.Errors.Total(), p99: e.LatencyMS.P99, retries: e.Retries})
	}
	return links
}

// graphColumns places each node in a column, clients at 0 and a service one right
// of its furthest caller, and lists the nodes in the order they first appear.
func graphColumns(links []link, isClient map[string]bool) (map[string]int, []string) {
	col := map[string]int{}
	var order []string
	add := func(n string) {
		if _, ok := col[n]; !ok {
			col[n] = 0
			if !isClient[n] {
				col[n] = 1
			}
			order = append(order, n)
		}
	}
	for _, l := range links {
		add(l.from)
		add(l.to)
	}
	// Longest path over a graph validation keeps acyclic: as many passes as nodes.
	for range order {
		for _, l := range links {
			col[l.to] = max(col[l.to], col[l.from]+1)
		}
	}
	return col, order
}

// graphLine draws link l from box a to box b, arcing over the boxes between when it
// skips columns; most is the busiest link's requests, which the widest line has.
func graphLine(r *result.Result, l link, a, b graphNode, skips bool, most int64) graphEdge {
	x1, y1, x2, y2 := a.X+a.W, a.Y+a.H/2, b.X, b.Y+b.H/2
	mid := (x1 + x2) / 2
	d := fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2)
	if skips {
		arc := min(y1, y2) - nodeH - rowGap
		d = fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, x1+colGap/2, arc, x2-colGap/2, arc, x2, y2)
	}
	width := 1.5
	if most > 0 {
		width += 6.5 * float64(l.requests) / float64(most)
	}
	class := "ok"
	if l.failed > 0 {
		class = "some"
		if float64(l.failed) >= 0.01*float64(l.requests) {
			class = "bad"
		}
	}
	title := fmt.Sprintf("%s → %s: %s, %s failed", l.from, l.to, rateOf(l.requests, r.DurationS), errorShare(l.failed, l.requests))
	if l.p99 >= 0 {
		title += ", p99 " + ms(l.p99)
	}
	if l.retries > 0 {
		title += fmt.Sprintf(", %d retries", l.retries)
	}
	return graphEdge{D: d, Width: fmt.Sprintf("%.1f", width), Class: class, Title: title}
}

// nodeTitle is what hovering a node tells: a client's requests, or a service's own
// figures at its pods.
func nodeTitle(r *result.Result, name string, client bool) string {
	if client {
		for _, c := range r.Clients {
			if c.Name == name {
				return fmt.Sprintf("client %s: %d requests, %d failed", name, c.Requests+c.Errors, c.Errors)
			}
		}
	}
	for _, s := range r.Services {
		if s.Name == name && s.LatencyMS != nil {
			return fmt.Sprintf("service %s: %d requests, %d answered 503, p99 at its pods %s", name, s.Requests, s.Errors, ms(s.LatencyMS.P99))
		}
	}
	return name
}
