/* What the compiled core's two files share (llm_rx/speed/_scan.c, _strings.c). */
#ifndef LLM_RX_SCAN_H
#define LLM_RX_SCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MOST_HOLES 32
#define MOST_DIGITS 18

typedef struct {
    const char *at;
    Py_ssize_t size;
} Span;

typedef struct {
    PyObject **pieces;      /* bytes */
    const char *holes;
    Py_ssize_t count;       /* holes */
} Program;

/* The end of a JSON string's inside starting at p (its closing quote), or NULL if the string
 * does not close before end or holds what ends a run; *escaped and *wide say whether it has
 * escapes and bytes past ASCII. */
const unsigned char *string_end(const unsigned char *p, const unsigned char *end, int *escaped,
                                int *wide);

/* The string of an inside [p, end), or NULL: with an error set if one was raised (out of
 * memory), without one if the run ends here (what orjson would not read so). */
PyObject *string_of(const unsigned char *p, const unsigned char *end, int escaped, int wide);

#endif
