/*
 * test_sha256.c - core/sha256.c against the test vectors of FIPS 180-4
 * (the "abc", two-block and million-'a' messages) and RFC 4231 (HMAC-SHA256
 * cases 1, 2 and 6: a key longer than a block), and piecewise updates
 * equal to one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

static void hex(const unsigned char *d, char out[SHA256_HEX_LEN + 1])
{
    size_t i;

    for (i = 0; i < SHA256_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void test_vectors(void **state)
{
    char h[SHA256_HEX_LEN + 1];
    unsigned char d[SHA256_LEN];
    sha256_ctx c;
    static char a[1000];
    int i;

    (void)state;
    sha256_hex("", 0, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex("abc", 3, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    memset(a, 'a', sizeof a);
    sha256_init(&c);
    for (i = 0; i < 1000; i++)
        sha256_update(&c, a, sizeof a);
    sha256_final(&c, d);
    hex(d, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* bytes one at a time give the same digest */
    sha256_init(&c);
    for (i = 0; i < 3; i++)
        sha256_update(&c, &"abc"[i], 1);
    sha256_final(&c, d);
    hex(d, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_hmac(void **state)
{
    unsigned char key[131], d[SHA256_LEN];
    char h[SHA256_HEX_LEN + 1];
    static const char big[] = "Test Using Larger Than Block-Size Key - Hash Key First";

    (void)state;
    memset(key, 0x0b, 20);
    hmac_sha256(key, 20, "Hi There", 8, d);
    hex(d, h);
    assert_string_equal(h, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
    hex(d, h);
    assert_string_equal(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, sizeof key);
    hmac_sha256(key, sizeof key, big, strlen(big), d);
    hex(d, h);
    assert_string_equal(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_hmac),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
