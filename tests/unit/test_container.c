/* test_container.c - the NSpid line of /proc/PID/status (merge/symbols/container.c),
 * on hand-made texts: nesting, none, malformed (blanks only, stray bytes,
 * a NUL, a key elsewhere), unterminated, too big. */
#include "check.h"
#include "container.h"

#include <errno.h>
#include <string.h>

static int parse(const char *text, uint32_t *nspid)
{
    *nspid = 7777;
    return container__nspid(text, strlen(text), nspid);
}

int main(void)
{
    uint32_t v;
    /* a host process, then a container's init, then two levels down */
    CHECK(parse("Name:\tpython3\nTgid:\t4242\nNSpid:\t4242\nPPid:\t1\n", &v) == 1 && v == 4242);
    CHECK(parse("Name:\tpython3\nNStgid:\t12727\t1\nNSpid:\t12727\t1\nNSpgid:\t12727\t1\n", &v) == 2 && v == 1);
    CHECK(parse("NSpid:\t900\t31\t5", &v) == 3 && v == 5);    /* last line, no newline */
    /* NStgid and NSpgid are not NSpid */
    CHECK(parse("NStgid:\t8\t1\nNSpgid:\t8\t1\n", &v) == -ENOENT && v == 7777);
    CHECK(parse("", &v) == -ENOENT);
    CHECK(parse("NSpid:\n", &v) == -EINVAL);
    CHECK(parse("NSpid:\t12x\n", &v) == -EINVAL);
    CHECK(parse("NSpid:\t-1\n", &v) == -EINVAL);
    CHECK(parse("NSpid:\t4294967295\n", &v) == 1 && v == 4294967295u);
    CHECK(parse("NSpid:\t4294967296\n", &v) == -EINVAL);
    CHECK(parse("NSpid:\t99999999999999999999999\n", &v) == -EINVAL);
    CHECK(parse("NSpid: \t \n", &v) == -EINVAL && v == 7777);      /* blanks only */
    CHECK(parse("NSpid: 5  6\r\n", &v) == -EINVAL);                 /* a stray byte */
    CHECK(parse("NSpid: 5  6 \n", &v) == 2 && v == 6);               /* spaces too */
    CHECK(parse("xNSpid:\t5\nNSpidx:\t6\n", &v) == -ENOENT);        /* not at a line's start, not the key */
    CHECK(parse("Name:\tNSpid: 3\nNSpid:\t9\t4\n", &v) == 2 && v == 4);
    CHECK(container__nspid("NSpid:\t4\0\t1\n", 12, &v) == -EINVAL);  /* a NUL inside */
    /* the length bounds the text: a line cut off before its PID */
    const char *cut = "NSpid:\t4242\t1\n";
    CHECK(container__nspid(cut, 6, &v) == -EINVAL);
    CHECK(container__nspid(cut, 11, &v) == 1 && v == 4242);
    CHECK(container__nspid(cut, 5, &v) == -ENOENT);
    return 0;
}
