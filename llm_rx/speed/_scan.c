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
 * whether every 'I' hole held the same digits as in the first frame.
 *
 * scan_messages(data, pos, headers, pieces, holes, out, max_frame) does the same over AWS
 * event-stream messages (Bedrock's): each message's prelude and message CRCs checked, its
 * header bytes those given, its payload exactly the program's; it stops at the first message
 * that is not so, cut, or longer than max_frame.
 *
 * Nothing is kept between calls (the CRC table is a constant): no state shared between
 * threads; the bytes are read within their length only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include <stdint.h>

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

static const uint32_t crc_table[256] = {
0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du
};

static uint32_t
crc32_of(const unsigned char *p, Py_ssize_t size)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (Py_ssize_t i = 0; i < size; i++)
        crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

static uint32_t
be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int
same_digits(const Span *a, const Span *b, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++)
        if (a[i].size != b[i].size || memcmp(a[i].at, b[i].at, a[i].size) != 0)
            return 0;
    return 1;
}

/* The arguments both entry points share, checked: NULL with an error set if one is wrong. */
static int
program_of(PyObject *pieces, PyObject *holes, Program *program)
{
    if (!PyTuple_CheckExact(pieces) || !PyBytes_CheckExact(holes)) {
        PyErr_SetString(PyExc_TypeError, "the program is a tuple of bytes and the holes bytes");
        return -1;
    }
    Py_ssize_t count = PyBytes_GET_SIZE(holes);
    if (PyTuple_GET_SIZE(pieces) != count + 1 || count > MOST_HOLES) {
        PyErr_SetString(PyExc_ValueError, "a program's pieces are one more than its holes "
                        "(at most 32)");
        return -1;
    }
    for (Py_ssize_t i = 0; i <= count; i++) {
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(pieces, i))) {
            PyErr_SetString(PyExc_TypeError, "each piece is bytes");
            return -1;
        }
    }
    program->pieces = &PyTuple_GET_ITEM(pieces, 0);
    program->holes = PyBytes_AS_STRING(holes);
    program->count = count;
    return 0;
}

/* One event-stream message from p: its end, or NULL (see frame()). */
static const unsigned char *
message(const Program *program, PyObject *headers, const unsigned char *p,
        const unsigned char *end, Py_ssize_t most, PyObject **text, Span *digits, int *failed)
{
    *text = NULL;
    if (end - p < 16)
        return NULL;
    uint32_t total = be32(p), size = be32(p + 4);
    Py_ssize_t heads = PyBytes_GET_SIZE(headers);
    if (crc32_of(p, 8) != be32(p + 8) || total < 16 || (Py_ssize_t)total > most
        || (Py_ssize_t)total > end - p || size > total - 16 || (Py_ssize_t)size != heads
        || memcmp(p + 12, PyBytes_AS_STRING(headers), heads) != 0
        || crc32_of(p, total - 4) != be32(p + total - 4))
        return NULL;
    const unsigned char *stop = p + total - 4;
    const unsigned char *read = frame(program, p + 12 + heads, stop, text, digits, failed);
    if (read != stop) {
        Py_CLEAR(*text);
        return NULL;
    }
    return p + total;
}

/* The loop of both entry points; headers NULL: frames of the program, else messages. */
static PyObject *
scan_with(PyObject *data, Py_ssize_t pos, PyObject *headers, const Program *program,
          PyObject *out, Py_ssize_t most)
{
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (pos < 0 || pos > size) {
        PyErr_SetString(PyExc_ValueError, "the position is outside the data");
        return NULL;
    }
    const unsigned char *start = (const unsigned char *)PyBytes_AS_STRING(data);
    const unsigned char *end = start + size, *p = start + pos;
    Span first_digits[MOST_HOLES], digits[MOST_HOLES];
    Py_ssize_t frames = 0, first = -1, last = -1, numbers = 0;
    int same = 1, failed = 0;
    while (p < end) {
        PyObject *text;
        Span *spans = frames ? digits : first_digits;
        const unsigned char *next;
        if (headers == NULL) {
            const unsigned char *limit = end - p > most ? p + most : end;
            next = frame(program, p, limit, &text, spans, &failed);
        }
        else
            next = message(program, headers, p, end, most, &text, spans, &failed);
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
            for (Py_ssize_t i = 0; i < program->count; i++)
                numbers += program->holes[i] == 'I';
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

static int
integers(PyObject *pos_arg, PyObject *most_arg, Py_ssize_t *pos, Py_ssize_t *most)
{
    *pos = PyLong_AsSsize_t(pos_arg);
    if (*pos == -1 && PyErr_Occurred())
        return -1;
    *most = PyLong_AsSsize_t(most_arg);
    if (*most == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    Program program;
    Py_ssize_t pos, most;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "scan() takes 6 arguments");
        return NULL;
    }
    if (!PyBytes_CheckExact(args[0]) || !PyList_CheckExact(args[4])) {
        PyErr_SetString(PyExc_TypeError, "scan(bytes, int, tuple, bytes, list, int)");
        return NULL;
    }
    if (program_of(args[2], args[3], &program) < 0 || integers(args[1], args[5], &pos, &most) < 0)
        return NULL;
    return scan_with(args[0], pos, NULL, &program, args[4], most);
}

static PyObject *
scan_messages(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    Program program;
    Py_ssize_t pos, most;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "scan_messages() takes 7 arguments");
        return NULL;
    }
    if (!PyBytes_CheckExact(args[0]) || !PyBytes_CheckExact(args[2])
        || !PyList_CheckExact(args[5])) {
        PyErr_SetString(PyExc_TypeError,
                        "scan_messages(bytes, int, bytes, tuple, bytes, list, int)");
        return NULL;
    }
    if (program_of(args[3], args[4], &program) < 0 || integers(args[1], args[6], &pos, &most) < 0)
        return NULL;
    return scan_with(args[0], pos, args[2], &program, args[5], most);
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(data, pos, pieces, holes, out, max_frame) -> (end, count, first, last, same)"},
    {"scan_messages", (PyCFunction)(void (*)(void))scan_messages, METH_FASTCALL,
     "scan_messages(data, pos, headers, pieces, holes, out, max_frame) -> (end, count, first, "
     "last, same)"},
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
