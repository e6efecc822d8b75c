/*
 * kallsyms.c - parse "ADDR TYPE NAME [\t[MODULE]]" lines into a symtab.
 *
 * The whole file is read into one block that the symtab adopts; names
 * are cut out of it in place.  /proc/kallsyms has ~100k lines, so this
 * avoids as many copies and lookups.
 */
#include "kallsyms.h"
#include "util.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_KALLSYMS (256u << 20)

/* The file's bytes, NUL-terminated; NULL with errno on failure. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0, cap = 1 << 20;
    char *buf;
    if (fd < 0)
        return NULL;
    buf = xmalloc(cap);
    for (;;) {
        if (cap - n < 65536) {
            if (cap >= MAX_KALLSYMS) {
                errno = EFBIG;
                break;
            }
            buf = xrealloc(buf, cap *= 2);
        }
        ssize_t k = read(fd, buf + n, cap - n - 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k < 0)
                break;
            close(fd);
            buf[n] = 0;
            *len = n;
            return buf;
        }
        n += (size_t)k;
    }
    int e = errno;
    close(fd);
    free(buf);
    errno = e;
    return NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int kallsyms__load(struct symtab *t, const char *path, int *hidden, uint64_t *text)
{
    size_t len, n_lines = 0, n_zero = 0;
    char *buf = slurp(path, &len);

    *hidden = 0;
    *text = 0;
    if (!buf)
        return errno ? -errno : -EIO;
    strarena__adopt(&t->names, buf);
    for (char *p = buf, *eol; p < buf + len; p = eol + 1) {
        eol = memchr(p, '\n', (size_t)(buf + len - p));
        if (!eol)
            eol = buf + len;
        *eol = 0;
        uint64_t addr = 0;
        int d, digits = 0;
        while ((d = hexval(*p)) >= 0 && digits < 17) {
            addr = addr << 4 | (uint64_t)d;
            p++;
            digits++;
        }
        if (!digits)
            continue;
        n_lines++;
        n_zero += addr == 0;
        if (p[0] != ' ' || !p[1] || p[2] != ' ')
            continue;
        char type = p[1], up = (char)toupper((unsigned char)type);
        if (up != 'T' && up != 'W' && up != 'D' && up != 'B')
            continue;
        const char *name = p + 3;
        if (!*name || name[0] == '$')   /* ARM mapping symbols */
            continue;
        if (!*text && strcmp(name, "_text") == 0)
            *text = addr;
        /* The module tag stays in the name until symtab__finish has seen
         * where the kernel ends and the modules begin. */
        uint8_t bind = up == 'W' ? STB_WEAK : isupper((unsigned char)type) ? STB_GLOBAL : STB_LOCAL;
        uint8_t stype = (up == 'T' || up == 'W') ? STT_FUNC : STT_OBJECT;
        symtab__add_owned(t, addr, 0, bind, stype, name);
    }
    if (n_lines && n_zero == n_lines) {
        *hidden = 1;
        symtab__exit(t);
        return 0;
    }
    symtab__finish(t, 1);
    for (size_t i = 0; i < t->n; i++) {
        char *tab = strchr(t->syms[i].name, '\t');   /* our own buffer */
        if (tab)
            *tab = 0;
    }
    return 0;
}
