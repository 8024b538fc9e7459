package sim

// Alloc stores x in a slot of items that free lists, else appends it, and returns
// its index. The simulation's tables of pooled state (requests, connections, HTTP/2
// chunks) reuse slots this way, so memory follows what is alive, not simulated time.
func Alloc[T any, I ~int32](items *[]T, free *[]I, x T) I {
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		(*items)[i] = x
		return i
	}
	*items = append(*items, x)
	return I(len(*items) - 1)
}
