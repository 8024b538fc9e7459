package simulate

// tasks holds the pieces of work waiting on a CPU group that are not jobs of a
// pod (a client's, kube-proxy's), by the ID the group holds them under; IDs are
// reused, so that the table stays as small as the work in progress.
type tasks[T any] struct {
	items []T
	free  []int32
}

// add stores t and returns its ID.
func (ts *tasks[T]) add(t T) int32 {
	if n := len(ts.free); n > 0 {
		id := ts.free[n-1]
		ts.free = ts.free[:n-1]
		ts.items[id] = t
		return id
	}
	ts.items = append(ts.items, t)
	return int32(len(ts.items) - 1)
}

// take returns the task with ID id and frees the ID.
func (ts *tasks[T]) take(id int32) T {
	ts.free = append(ts.free, id)
	return ts.items[id]
}
