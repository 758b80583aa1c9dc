// Definitions every Lisp session starts with, written in Lisp: the functions a reader of the
// docs (`[LISP: (fib 10)]`, `(fact 30)`) or a model expects to exist. A session may redefine them.
export const LISP_PRELUDE = `
(define (fact n)
  (let loop ((i 2) (acc 1))
    (if (> i n) acc (loop (+ i 1) (* acc i)))))
(define (fib n)
  (let loop ((i 0) (a 0) (b 1))
    (if (= i n) a (loop (+ i 1) b (+ a b)))))
`;
