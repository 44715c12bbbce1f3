/* The compiled hot loop of llm_rx.speed (optional: llm_rx/speed/scan.py is its twin).
 *
 * scan(data, pos, pieces, holes, out, max_frame) reads, from data[pos:], the frames that are
 * a learnt program's bytes: pieces[0] hole[0] pieces[1] ... hole[n-1] pieces[n], each piece
 * literal bytes and each hole one of
 *
 *   'S'  the inside of a JSON string (its quotes are in the pieces around it): decoded, and
 *        appended to ``out``; a string this loop does not read exactly as orjson would (an
 *        escape of a lone surrogate, invalid UTF-8, a raw control character) ends the run
 *   'A'  the inside of a JSON string skipped: printable ASCII but '"' and '\\', any length
 *   'N'  the same, letters and digits only, one at least
 *   'I'  a JSON integer skipped: 0, or 1 to 18 digits not starting with 0
 *   'P'  spaces, any number (JSON padding)
 *
 * and stops at the first frame that is not so, or that would be longer than max_frame, or
 * that is not whole in data. It returns (end, count, first, last, same): where it stopped,
 * how many frames it read, where the first and the last of them start (-1 for none), and
 * whether every 'I' hole held the same digits as in the first frame. Nothing is kept between
 * calls: no state shared between threads; the bytes are read within their length only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MOST_HOLES 32
#define MOST_DIGITS 18

typedef struct {
    const char *at;
    Py_ssize_t size;
} Span;

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static long
hex4(const unsigned char *p)
{
    long value = 0;
    for (int i = 0; i < 4; i++) {
        int digit = hex_value(p[i]);
        if (digit < 0)
            return -1;
        value = value * 16 + digit;
    }
    return value;
}

/* The end of a JSON string's inside starting at p (its closing quote), or NULL if the string
 * does not close before end or holds what ends a run (see above). *escaped and *wide say
 * whether it has escapes and bytes past ASCII. */
static const unsigned char *
string_end(const unsigned char *p, const unsigned char *end, int *escaped, int *wide)
{
    while (p < end) {
        unsigned char c = *p;
        if (c == '"')
            return p;
        if (c == '\\') {
            if (p + 1 >= end)
                return NULL;
            *escaped = 1;
            c = p[1];
            if (c == 'u') {
                if (p + 6 > end || hex4(p + 2) < 0)
                    return NULL;
                p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", c) || c == 0)
                return NULL;
            p += 2;
            continue;
        }
        if (c < 0x20)
            return NULL;
        if (c >= 0x80)
            *wide = 1;
        p++;
    }
    return NULL;
}

static Py_ssize_t
put_utf8(unsigned char *q, long code)
{
    if (code < 0x80) {
        q[0] = (unsigned char)code;
        return 1;
    }
    if (code < 0x800) {
        q[0] = (unsigned char)(0xC0 | (code >> 6));
        q[1] = (unsigned char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        q[0] = (unsigned char)(0xE0 | (code >> 12));
        q[1] = (unsigned char)(0x80 | ((code >> 6) & 0x3F));
        q[2] = (unsigned char)(0x80 | (code & 0x3F));
        return 3;
    }
    q[0] = (unsigned char)(0xF0 | (code >> 18));
    q[1] = (unsigned char)(0x80 | ((code >> 12) & 0x3F));
    q[2] = (unsigned char)(0x80 | ((code >> 6) & 0x3F));
    q[3] = (unsigned char)(0x80 | (code & 0x3F));
    return 4;
}

/* The string of an inside with escapes, or NULL (no error set) where orjson would refuse it
 * (a lone surrogate) or it is no UTF-8. */
static PyObject *
unescaped(const unsigned char *p, const unsigned char *end)
{
    Py_ssize_t size = end - p;
    unsigned char small[512];
    unsigned char *buffer = size <= (Py_ssize_t)sizeof(small) ? small : PyMem_Malloc(size);
    if (buffer == NULL)
        return PyErr_NoMemory();
    unsigned char *q = buffer;
    PyObject *result = NULL;
    while (p < end) {
        unsigned char c = *p;
        if (c != '\\') {
            *q++ = c;
            p++;
            continue;
        }
        c = p[1];
        p += 2;
        switch (c) {
        case 'b': *q++ = '\b'; break;
        case 'f': *q++ = '\f'; break;
        case 'n': *q++ = '\n'; break;
        case 'r': *q++ = '\r'; break;
        case 't': *q++ = '\t'; break;
        case 'u': {
            long code = hex4(p);
            p += 4;
            if (code >= 0xDC00 && code <= 0xDFFF)
                goto refused;  /* (a low surrogate first) */
            if (code >= 0xD800 && code <= 0xDBFF) {
                long low;
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                    goto refused;
                low = hex4(p + 2);
                if (low < 0xDC00 || low > 0xDFFF)
                    goto refused;
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            }
            q += put_utf8(q, code);
            break;
        }
        default: *q++ = c;  /* '"', '\\', '/' */
        }
    }
    result = PyUnicode_DecodeUTF8((const char *)buffer, q - buffer, NULL);
    if (result == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        PyErr_Clear();
refused:
    if (buffer != small)
        PyMem_Free(buffer);
    return result;
}

/* The string of an inside [p, end), or NULL: with an error set if one was raised (out of
 * memory), without one if the run ends here. */
static PyObject *
string_of(const unsigned char *p, const unsigned char *end, int escaped, int wide)
{
    Py_ssize_t size = end - p;
    PyObject *result;
    if (escaped)
        return unescaped(p, end);
    if (wide) {
        result = PyUnicode_DecodeUTF8((const char *)p, size, NULL);
        if (result == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            PyErr_Clear();
        return result;
    }
    result = PyUnicode_New(size, 127);
    if (result != NULL)
        memcpy(PyUnicode_DATA(result), p, size);
    return result;
}

typedef struct {
    PyObject **pieces;      /* bytes */
    const char *holes;
    Py_ssize_t count;       /* holes */
} Program;

/* One frame from p: its end, or NULL. *text is the 'S' hole's string (a new reference, or
 * NULL with no error if it has none; with an error set and NULL returned when raised);
 * digits[] the 'I' holes' spans. */
static const unsigned char *
frame(const Program *program, const unsigned char *p, const unsigned char *end,
      PyObject **text, Span *digits, int *failed)
{
    *text = NULL;
    Py_ssize_t numbers = 0;
    for (Py_ssize_t i = 0;; i++) {
        PyObject *piece = program->pieces[i];
        Py_ssize_t size = PyBytes_GET_SIZE(piece);
        if (end - p < size || memcmp(p, PyBytes_AS_STRING(piece), size) != 0)
            goto missed;
        p += size;
        if (i == program->count)
            return p;
        switch (program->holes[i]) {
        case 'S': {
            int escaped = 0, wide = 0;
            const unsigned char *close = string_end(p, end, &escaped, &wide);
            if (close == NULL || *text != NULL)
                goto missed;
            *text = string_of(p, close, escaped, wide);
            if (*text == NULL) {
                if (PyErr_Occurred())
                    *failed = 1;
                goto missed;
            }
            p = close;
            break;
        }
        case 'A':
            while (p < end && *p >= 0x20 && *p < 0x7F && *p != '"' && *p != '\\')
                p++;
            break;
        case 'N': {
            const unsigned char *from = p;
            while (p < end && ((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')))
                p++;
            if (p == from)
                goto missed;
            break;
        }
        case 'I': {
            const unsigned char *from = p;
            if (p < end && *p == '0')
                p++;
            else
                while (p < end && *p >= '0' && *p <= '9' && p - from <= MOST_DIGITS)
                    p++;
            if (p == from || p - from > MOST_DIGITS || numbers >= MOST_HOLES)
                goto missed;
            digits[numbers].at = (const char *)from;
            digits[numbers].size = p - from;
            numbers++;
            break;
        }
        case 'P':
            while (p < end && *p == ' ')
                p++;
            break;
        default:
            goto missed;
        }
    }
missed:
    Py_CLEAR(*text);
    return NULL;
}

static int
same_digits(const Span *a, const Span *b, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++)
        if (a[i].size != b[i].size || memcmp(a[i].at, b[i].at, a[i].size) != 0)
            return 0;
    return 1;
}

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "scan() takes 6 arguments");
        return NULL;
    }
    PyObject *data = args[0], *pieces = args[2], *holes = args[3], *out = args[4];
    if (!PyBytes_CheckExact(data) || !PyTuple_CheckExact(pieces) || !PyBytes_CheckExact(holes)
        || !PyList_CheckExact(out)) {
        PyErr_SetString(PyExc_TypeError, "scan(bytes, int, tuple, bytes, list, int)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t most = PyLong_AsSsize_t(args[5]);
    if ((pos == -1 || most == -1) && PyErr_Occurred())
        return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    Py_ssize_t count = PyBytes_GET_SIZE(holes);
    if (pos < 0 || pos > size || PyTuple_GET_SIZE(pieces) != count + 1 || count > MOST_HOLES) {
        PyErr_SetString(PyExc_ValueError, "scan(): a position outside the data, or a program "
                        "whose pieces are not one more than its holes (at most 32)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i <= count; i++) {
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(pieces, i))) {
            PyErr_SetString(PyExc_TypeError, "scan(): each piece is bytes");
            return NULL;
        }
    }
    Program program = {&PyTuple_GET_ITEM(pieces, 0), PyBytes_AS_STRING(holes), count};
    const unsigned char *start = (const unsigned char *)PyBytes_AS_STRING(data);
    const unsigned char *end = start + size, *p = start + pos;
    Span first_digits[MOST_HOLES], digits[MOST_HOLES];
    Py_ssize_t frames = 0, first = -1, last = -1, numbers = 0;
    int same = 1, failed = 0;
    while (p < end) {
        PyObject *text;
        const unsigned char *limit = end - p > most ? p + most : end;
        const unsigned char *next = frame(&program, p, limit,
                                          &text, frames ? digits : first_digits, &failed);
        if (next == NULL) {
            if (failed)
                return NULL;
            break;
        }
        if (text != NULL) {
            int appended = PyList_Append(out, text);
            Py_DECREF(text);
            if (appended < 0)
                return NULL;
        }
        if (frames == 0) {
            first = p - start;
            for (Py_ssize_t i = 0; i < count; i++)
                numbers += program.holes[i] == 'I';
        }
        else if (same && numbers && !same_digits(first_digits, digits, numbers))
            same = 0;
        last = p - start;
        frames++;
        p = next;
    }
    return Py_BuildValue("(nnnnO)", (Py_ssize_t)(p - start), frames, first, last,
                         same ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(data, pos, pieces, holes, out, max_frame) -> (end, count, first, last, same)"},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", "The compiled hot loop of llm_rx.speed.", 0, methods,
    slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModuleDef_Init(&module);
}
