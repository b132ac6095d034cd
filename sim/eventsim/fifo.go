package eventsim

// FIFO is a first-in first-out queue for the simulators' waiting work. Its
// zero value is empty and ready. It reuses its backing array: a drained
// queue starts again at the front, and one that has consumed more than half
// of a long array moves the rest down, so a queue that never drains does
// not grow without bound.
type FIFO[T any] struct {
	q    []T
	head int
}

// compactAfter is how many consumed slots a queue keeps before it moves
// the rest down; below it the copy is not worth making.
const compactAfter = 256

// Push appends x at the back.
func (q *FIFO[T]) Push(x T) { q.q = append(q.q, x) }

// Empty reports whether nothing is waiting.
func (q *FIFO[T]) Empty() bool { return q.head == len(q.q) }

// Pop removes and returns the front; the queue must not be empty.
func (q *FIFO[T]) Pop() T {
	x := q.q[q.head]
	var zero T
	q.q[q.head] = zero // let the garbage collector have what x holds
	q.head++
	if q.head == len(q.q) {
		q.q, q.head = q.q[:0], 0
	} else if q.head > compactAfter && q.head*2 > len(q.q) {
		n := copy(q.q, q.q[q.head:])
		q.q, q.head = q.q[:n], 0
	}
	return x
}
