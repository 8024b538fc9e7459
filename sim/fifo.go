package sim

// FIFO is a first-in first-out queue on a ring buffer: memory follows the most items
// queued at once, not how many ever passed through.
type FIFO[T any] struct {
	buf        []T
	head, size int
}

// Len is the number of queued items.
func (q *FIFO[T]) Len() int { return q.size }

// Push appends x.
func (q *FIFO[T]) Push(x T) {
	if q.size == len(q.buf) {
		grown := make([]T, max(8, 2*len(q.buf)))
		for i := 0; i < q.size; i++ {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = x
	q.size++
}

// Pop removes and returns the oldest item; ok=false when empty.
func (q *FIFO[T]) Pop() (x T, ok bool) {
	if q.size == 0 {
		return x, false
	}
	x = q.buf[q.head]
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return x, true
}
