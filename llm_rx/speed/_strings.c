/* JSON strings as orjson reads them, for the compiled core (llm_rx/speed/_scan.c): what it
 * cannot read exactly so (an escape of a lone surrogate, invalid UTF-8, a raw control
 * character) it does not read at all, and the frame goes to the Python decoder. */
#include "_scan.h"

#include <string.h>

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
const unsigned char *
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
PyObject *
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

