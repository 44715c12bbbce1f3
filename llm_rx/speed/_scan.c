/* The compiled hot loop of llm_rx.speed (optional: the Python shortcut decoders it runs over
 * give the same events without it; tests/fuzz/twin.py is its entry point's twin).
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
 * Nothing is kept between calls (the CRC tables are written once, at import): no state
 * shared between threads; the bytes are read within their length only.
 */
#include "_scan.h"

#include <stdint.h>
#include <string.h>

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

/* zlib's CRC-32 tables, eight bytes a step: written once when the module is executed (under
 * the import lock, before any call can read them), only read after. */
static uint32_t crc_table[8][256];

static void
fill_crc_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xFF];
}

/* zlib's CRC-32 (the one AWS event-stream messages carry), eight bytes a step. */
static uint32_t
crc32_of(const unsigned char *p, Py_ssize_t size)
{
    uint32_t crc = 0xFFFFFFFFu;
    while (size >= 8) {
        uint32_t low = crc ^ ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16)
                              | ((uint32_t)p[3] << 24));
        uint32_t high = (uint32_t)p[4] | ((uint32_t)p[5] << 8) | ((uint32_t)p[6] << 16)
                        | ((uint32_t)p[7] << 24);
        crc = crc_table[7][low & 0xFF] ^ crc_table[6][(low >> 8) & 0xFF]
              ^ crc_table[5][(low >> 16) & 0xFF] ^ crc_table[4][low >> 24]
              ^ crc_table[3][high & 0xFF] ^ crc_table[2][(high >> 8) & 0xFF]
              ^ crc_table[1][(high >> 16) & 0xFF] ^ crc_table[0][high >> 24];
        p += 8;
        size -= 8;
    }
    while (size-- > 0)
        crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
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
        if (next == p) {  /* (a program that reads nothing: no frame, or this loop would
                             never end) */
            Py_XDECREF(text);
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

static int
exec_module(PyObject *module)
{
    (void)module;
    fill_crc_table();
    return 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
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
