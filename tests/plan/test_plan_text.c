/* Plan text: exact round trips, rejections naming the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tessera.h"

static const tsr_plan base = {.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .tm = 8,
                              .tn = 4, .stages = 3, .vec = 4, .a = TSR_IN_STAGED,
                              .b = TSR_IN_STAGED, .pad = 4, .walk = {TSR_WALK_LINEAR, 1, 1},
                              .splitk = 1, .threads = 0, .isa = TSR_ISA_AUTO,
                              .mma = TSR_MMA_FFMA};

static void test_brief_example(void **state) {
  tsr_plan p = base;
  char msg[256], out[512];
  const char *text = "bm=128,bn=128,bk=16,wm=64,wn=32,tm=8,tn=4,stages=3,vec=4,a=staged,"
                     "b=staged,pad=4,walk=rect:4x8,splitk=1";
  assert_int_equal(tsr_plan_parse(text, &p, msg, sizeof msg), TSR_OK);
  assert_int_equal(p.walk.kind, TSR_WALK_RECT);
  assert_int_equal(p.walk.r, 4);
  assert_int_equal(p.walk.c, 8);
  tsr_plan_format(&p, out, sizeof out);
  assert_string_equal(out, "bm=128,bn=128,bk=16,wm=64,wn=32,tm=8,tn=4,stages=3,vec=4,a=staged,"
                           "b=staged,pad=4,walk=rect:4x8,splitk=1,threads=0,isa=auto,mma=ffma,acc=step,minblocks=0,pack=none,split=inline");
}

static void test_round_trip_many(void **state) {
  static const char *const overlays[] = {
      "bm=64",        "bn=256,bk=32",          "a=view",         "b=view,a=view",
      "walk=stripe:7", "walk=rect:1x4294967295", "splitk=7",      "threads=2,isa=avx512",
      "isa=generic",  "isa=avx2",              "mma=tf32x3",     "pad=0,vec=1,stages=1",
      "mma=tf32,acc=chain", "acc=chain", "mma=gemv,threads=256,bm=16,bn=128,wm=1,wn=1,tm=1,tn=1",
      "tm=16,tn=2",   "walk=linear",           "wm=1,wn=65536", "minblocks=2", "pack=ab",
      "split=pack",   "mma=tf32x3,split=pack,pack=none", "split=producer", "split=producer-reg", "split=producer-bulk", "split=producer-tma,pad=0", "split=tma,pad=0",
      "split=producer-pack", "kfrag=a",      "kfrag=b,pack=b",        "kfrag=ab",       "kloop=1",
      "kfrag=a,kloop=1", "mma=wgmma-s8,moduli=8,split=producer-bulk", "moduli=12",
      "mma=wgmma-s8,moduli=8,gstride=4", "kfrag=ab,kloop=1,moduli=12,gstride=64",
      "mma=wgmma-s8,moduli=8,rvec=4", "kfrag=ab,kloop=1,moduli=12,gstride=64,rvec=4",
      "mma=gemv,lanerows=2", "kfrag=ab,kloop=65536,moduli=65536,gstride=65536,rvec=65536,lanerows=65536",
      "kloop=1,kunroll=1", "kfrag=a,kloop=2,kunroll=1,moduli=12", "tailk=5,wave=396", "forder=1",
      "kloop=2,tailk=64,wave=65536,forder=4096", "lanerows=2,forder=7", "kwait=1",
      "kloop=2,forder=1,kwait=1", "pelect=1", "kloop=2,kunroll=1,kwait=1,pelect=1",
      "krel=1", "kloop=2,pelect=1,krel=1", "krel=2", "kinner=8", "kloop=2,krel=1,kinner=16",
      "lazy=4", "kloop=2,krel=1,lazy=64"};
  for (size_t i = 0; i < sizeof overlays / sizeof overlays[0]; i++) {
    tsr_plan p = base, q = base;
    char msg[256], t1[512], t2[512];
    assert_int_equal(tsr_plan_parse(overlays[i], &p, msg, sizeof msg), TSR_OK);
    assert_false(tsr_plan_equal(&p, &base) && strcmp(overlays[i], "walk=linear") != 0);
    tsr_plan_format(&p, t1, sizeof t1);
    /* over a base of garbage: the whole text names every base key, and the optional ones
     * (kfrag ... kinner) only when set, so the parse unsets the ones it leaves out */
    memset(&q, 0x55, sizeof q);
    if (p.kfrag == TSR_PACK_NONE) {
      assert_null(strstr(t1, "kfrag"));
    } else {
      assert_non_null(strstr(t1, ",kfrag="));
    }
    if (p.kloop == 0) {
      assert_null(strstr(t1, "kloop"));
    } else {
      assert_non_null(strstr(t1, ",kloop="));
    }
    if (p.kunroll == 0) {
      assert_null(strstr(t1, "kunroll"));
    } else {
      assert_non_null(strstr(t1, ",kunroll="));
    }
    if (p.moduli == 0) {
      assert_null(strstr(t1, "moduli"));
    } else {
      assert_non_null(strstr(t1, ",moduli="));
    }
    if (p.gstride == 0) {
      assert_null(strstr(t1, "gstride"));
    } else {
      assert_non_null(strstr(t1, ",gstride="));
    }
    if (p.rvec == 0) {
      assert_null(strstr(t1, "rvec"));
    } else {
      assert_non_null(strstr(t1, ",rvec="));
    }
    if (p.lanerows == 0) {
      assert_null(strstr(t1, "lanerows"));
    } else {
      assert_non_null(strstr(t1, ",lanerows="));
    }
    const struct { int v; const char *key; } opt[] = {
        {p.tailk, ",tailk="}, {p.wave, ",wave="}, {p.forder, ",forder="},
        {p.kwait, ",kwait="}, {p.pelect, ",pelect="}, {p.krel, ",krel="}, {p.kinner, ",kinner="},
        {p.lazy, ",lazy="}};
    for (size_t o = 0; o < sizeof opt / sizeof opt[0]; o++) {
      if (opt[o].v == 0) {
        assert_null(strstr(t1, opt[o].key));
      } else {
        assert_non_null(strstr(t1, opt[o].key));
      }
    }
    assert_int_equal(tsr_plan_parse(t1, &q, msg, sizeof msg), TSR_OK);
    assert_true(tsr_plan_equal(&p, &q));
    tsr_plan_format(&q, t2, sizeof t2);
    assert_string_equal(t1, t2);
  }
}

/* A whole text over a base whose every optional key is set: the text's plan,
 * not a blend (session 35: tuned winners parsed over a default with krel=1 or
 * kfrag=ab failed their replay); a partial text still overrides the base. */
static void test_whole_text_unsets_optional_keys(void **state) {
  tsr_plan busy = base;
  char msg[256], t[512];
  assert_int_equal(tsr_plan_parse("kfrag=ab,kloop=2,kunroll=1,moduli=8,gstride=4,rvec=4,lanerows=2,"
                                  "tailk=5,wave=396,forder=1,kwait=1,pelect=1,krel=1,kinner=8,lazy=4",
                                  &busy, msg, sizeof msg),
                   TSR_OK);
  tsr_plan q = busy;
  const char *whole = "bm=64,bn=128,bk=16,wm=32,wn=64,tm=8,tn=8,stages=2,vec=4,a=staged,b=staged,"
                      "pad=4,walk=linear,splitk=1,threads=0,isa=auto,mma=ffma,acc=step,minblocks=3,"
                      "pack=none,split=producer,kloop=2,forder=1";
  assert_int_equal(tsr_plan_parse(whole, &q, msg, sizeof msg), TSR_OK);
  assert_int_equal(q.kfrag, TSR_PACK_NONE);
  assert_int_equal(q.kloop, 2);
  assert_int_equal(q.forder, 1);
  assert_int_equal(q.kunroll + q.moduli + q.gstride + q.rvec + q.lanerows + q.tailk + q.wave +
                       q.kwait + q.pelect + q.krel + q.kinner + q.lazy,
                   0);
  tsr_plan_format(&q, t, sizeof t);
  assert_string_equal(t, whole);
  /* one base key short of whole (the same text cut before split): an overlay, the
   * base's optional keys kept */
  tsr_plan r = busy;
  char partial[512];
  snprintf(partial, sizeof partial, "%s", whole);
  *strstr(partial, ",split=") = '\0';
  assert_int_equal(tsr_plan_parse(partial, &r, msg, sizeof msg), TSR_OK);
  assert_int_equal(r.split, base.split);
  assert_int_equal(r.kfrag, TSR_PACK_AB);
  assert_int_equal(r.krel, 1);
  assert_int_equal(r.tailk, 5);
  assert_int_equal(r.kinner, 8);
  assert_int_equal(r.lazy, 4);
}

static void expect_reject(const char *text, const char *needle) {
  tsr_plan p = base;
  char msg[256] = "";
  assert_int_equal(tsr_plan_parse(text, &p, msg, sizeof msg), TSR_ERR_PARSE);
  if (!strstr(msg, needle)) fail_msg("'%s' → '%s' does not name '%s'", text, msg, needle);
  assert_true(tsr_plan_equal(&p, &base)); /* nothing changed on failure */
}

static void test_rejections(void **state) {
  expect_reject("", "empty");
  expect_reject("bm=0", "bm=0");
  expect_reject("bm=-4", "bm=-4");
  expect_reject("bm=12a", "bm=12a");
  expect_reject("bm=", "bm");
  expect_reject("bm=99999999", "bm=99999999");
  expect_reject("bm=64,bm=32", "bm");
  expect_reject("bq=64", "bq");
  expect_reject("bm", "bm");
  expect_reject("bm=64,", "trailing");
  expect_reject(",bm=64", "empty item");
  expect_reject("a=staging", "a=staging");
  expect_reject("isa=sse", "isa=sse");
  expect_reject("mma=tf16", "mma=tf16");
  expect_reject("acc=kahan", "acc=kahan");
  expect_reject("split=packed", "split=packed is not inline, pack, producer, producer-reg, producer-pack, producer-bulk, producer-tma or tma");
  expect_reject("split=pack,split=inline", "split");
  expect_reject("kfrag=c", "kfrag=c is not none, a, b or ab");
  expect_reject("pack=x", "pack=x is not none, a, b or ab");
  expect_reject("walk=rect:0x4", "walk");
  expect_reject("walk=spiral", "walk");
  expect_reject("splitk=0", "splitk=0");
  expect_reject("stages=0", "stages");
}

static void test_status_table(void **state) {
  assert_string_equal(tsr_status_str(TSR_OK), "ok");
  assert_string_equal(tsr_status_name(TSR_ERR_NVRTC), "TSR_ERR_NVRTC");
  assert_string_equal(tsr_status_str(TSR_ERR_NO_CUDA), "no CUDA driver found");
  assert_string_equal(tsr_status_str((tsr_status)999), "unknown status");
  for (int s = 0; s < TSR_STATUS_COUNT; s++) assert_true(strlen(tsr_status_str((tsr_status)s)) > 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_brief_example),
      cmocka_unit_test(test_round_trip_many),
      cmocka_unit_test(test_whole_text_unsets_optional_keys),
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_status_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
