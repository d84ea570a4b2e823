/* Anchor: Layerweaver's closed-loop decision loop in plain C (benchmarks only).
 *
 * A port of npuweave's loop (npuweave.schedule.kernel: fetch end, fetch window, the greedy
 * selection with starvation filter and tie-breaks, the FCFS failsafe, the buffer commit and the
 * closed-loop re-issue) with the same float operations in the same order, so the decisions and
 * times equal npuweave's; bench_anchors.py checks that before it reports a ratio.
 *
 * Input (binary, native endianness): int64 k, n, failsafe, requests, reps; double bw;
 * int64 buf; int64 off[k+1]; int64 size[n]; double comp[n], ftime[n], inh[n];
 * int64 compute_kind[k]; double mft[k].  Output file: int64 decisions, then per decision
 * int64 tenant and double compute end.  Stdout: decisions and the median CPU ns per run (process CPU time: the machine is shared).
 *
 * Build: cc -O2 -o lwgreedy lwgreedy.c   (no -ffast-math: it would reorder float sums)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EPS 1e-12
typedef int64_t i64;

static i64 k, n, failsafe, requests, reps, buf;
static double bw;
static i64 *off, *size, *ckind;
static double *comp, *ftime_, *inh, *mft;

static i64 *fl_s; static double *fl_c, *fl_f; static i64 fl_cap;

static double fetch_end(i64 head, i64 tail, double t_m, i64 free_, i64 sz) {
    double t = t_m + free_ / bw;
    i64 need = sz - free_;
    for (i64 j = head; j < tail; j++) {
        i64 s = fl_s[j]; double c = fl_c[j];
        if (t < c) t = c;
        if (need <= s) return t + need / bw;
        need -= s;
        t += fl_f[j];
    }
    return INFINITY;
}

static double fetch_window(i64 head, i64 tail, i64 free_, double t0, double t1) {
    i64 j = head;
    while (j < tail && fl_c[j] <= t0) { free_ += fl_s[j]; j++; }
    double t = t0, got = 0.0;
    if (free_ > 0) {
        if (t + free_ / bw >= t1) return (t1 - t) * bw;
        t += free_ / bw;
        got = (double)free_;
    }
    while (j < tail) {
        i64 s = fl_s[j]; double c = fl_c[j];
        if (c >= t1) break;
        if (t < c) t = c;
        if (t + fl_f[j] >= t1) return got + (t1 - t) * bw;
        t += fl_f[j];
        got += s;
        j++;
    }
    return got;
}

static i64 run(i64 *o_t, double *o_ce) {
    char *active = calloc(k, 1); i64 *pos = calloc(k, 8), *req = calloc(k, 8);
    double *arrival = calloc(k, 8), *ev_tot = calloc(k, 8), *ev_dd = calloc(k, 8);
    double *ev_fe = calloc(k, 8); char *ev_ok = calloc(k, 1);
    double t_m = 0.0, t_c = 0.0, maxft = 0.0;
    i64 head = 0, tail = 0, used = 0, nact = 0, nd = 0;
    for (i64 t = 0; t < k; t++) { active[t] = 1; nact++; if (mft[t] > maxft) maxft = mft[t]; }
    while (nact > 0) {
        i64 free_ = buf - used, t = -1;
        int chose = 0;
        if (nact == 1) { t = 0; while (!active[t]) t++; }
        else if (failsafe) {
            for (i64 v = 0; v < k && t < 0; v++) if (active[v] && pos[v] > 0) t = v;
            if (t < 0) for (i64 v = 0; v < k; v++)
                if (active[v] && (t < 0 || arrival[v] < arrival[t])) t = v;
        } else {
            int all_ci = 1, all_mem = 1;
            for (i64 v = 0; v < k; v++) {
                if (!active[v]) continue;
                i64 u = off[v] + pos[v], sz = size[u];
                double fe = sz <= free_ ? t_m + ftime_[u] : fetch_end(head, tail, t_m, free_, sz);
                ev_fe[v] = fe;
                double ce = (t_c > fe ? t_c : fe) + comp[u], h = inh[u], mem = h, ci;
                if (fe > t_c) ci = fe - t_c;
                else {
                    ci = 0.0;
                    if (fe < t_c && h + (t_c - fe) > 0.0)
                        mem = h + fetch_window(head, tail, free_ - sz, fe, t_c) / bw;
                }
                double charged = (mem > 0.0 ? mem : 0.0) - (h > 0.0 ? h : 0.0);
                double pi = maxft - (ce - fe);
                ev_tot[v] = ci + charged + (pi > 0.0 ? pi : 0.0);
                ev_dd[v] = ce - fe;
                if (ci <= EPS) all_ci = 0;
                if (mem <= EPS) all_mem = 0;
            }
            i64 n_ok = 0;
            for (i64 v = 0; v < k; v++) {
                char ok = active[v];
                if (ok && all_ci) ok = ckind[v] != 0;
                else if (ok && all_mem) ok = ckind[v] == 0;
                ev_ok[v] = ok; n_ok += ok;
            }
            if (n_ok == 0) for (i64 v = 0; v < k; v++) ev_ok[v] = active[v];
            double best = INFINITY;
            for (i64 v = 0; v < k; v++) if (ev_ok[v] && ev_tot[v] < best) best = ev_tot[v];
            int pick_h = 1; double pick_nd = 0.0;
            for (i64 v = 0; v < k; v++) {
                if (!ev_ok[v] || !(ev_tot[v] <= best + EPS)) continue;
                int h = inh[off[v] + pos[v]] > 0.0; double ndv = -ev_dd[v];
                if (t < 0 || h < pick_h || (h == pick_h && ndv < pick_nd)) {
                    t = v; pick_h = h; pick_nd = ndv;
                }
            }
            chose = 1;
        }
        i64 i = pos[t], u = off[t] + i, sz = size[u];
        double fe;
        if (sz == 0) fe = t_m;
        else if (chose) fe = ev_fe[t];
        else if (sz <= free_) fe = t_m + ftime_[u];
        else fe = fetch_end(head, tail, t_m, free_, sz);
        double cs = t_c > fe ? t_c : fe, ce = cs + comp[u];
        while (head < tail && fl_c[head] <= fe) { used -= fl_s[head]; head++; }
        if (tail == fl_cap) {
            memmove(fl_s, fl_s + head, (tail - head) * 8);
            memmove(fl_c, fl_c + head, (tail - head) * 8);
            memmove(fl_f, fl_f + head, (tail - head) * 8);
            tail -= head; head = 0;
        }
        if (sz > 0 && ce > fe) {
            fl_s[tail] = sz; fl_c[tail] = ce; fl_f[tail] = ftime_[u]; tail++; used += sz;
        }
        t_m = fe; t_c = ce;
        o_t[nd] = t; o_ce[nd] = ce; nd++;
        i64 r = req[t];
        if (u + 1 < off[t + 1]) pos[t] = i + 1;
        else if (r + 1 < requests) { req[t] = r + 1; arrival[t] = ce; pos[t] = 0; }
        else {
            active[t] = 0; nact--; maxft = 0.0;
            for (i64 v = 0; v < k; v++) if (active[v] && mft[v] > maxft) maxft = mft[v];
        }
    }
    free(active); free(pos); free(req); free(arrival); free(ev_tot); free(ev_dd);
    free(ev_fe); free(ev_ok);
    return nd;
}

static void *rd(FILE *f, i64 count, size_t each) {
    void *p = malloc(count * each + 8);
    if (fread(p, each, count, f) != (size_t)count) { fprintf(stderr, "short input\n"); exit(2); }
    return p;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: lwgreedy INPUT OUTPUT\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    i64 *hdr = rd(f, 5, 8);
    k = hdr[0]; n = hdr[1]; failsafe = hdr[2]; requests = hdr[3]; reps = hdr[4];
    double *pbw = rd(f, 1, 8); bw = *pbw;
    i64 *pbuf = rd(f, 1, 8); buf = *pbuf;
    off = rd(f, k + 1, 8); size = rd(f, n, 8);
    comp = rd(f, n, 8); ftime_ = rd(f, n, 8); inh = rd(f, n, 8);
    ckind = rd(f, k, 8); mft = rd(f, k, 8);
    fclose(f);
    i64 cap = n * requests + 16;
    fl_cap = cap; fl_s = malloc(cap * 8); fl_c = malloc(cap * 8); fl_f = malloc(cap * 8);
    i64 *o_t = malloc(cap * 8); double *o_ce = malloc(cap * 8);
    double *ns = malloc(reps * 8);
    i64 nd = 0;
    for (i64 r = 0; r < reps; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        nd = run(o_t, o_ce);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        ns[r] = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    }
    qsort(ns, reps, 8, cmp);
    FILE *o = fopen(argv[2], "wb");
    if (!o) { perror(argv[2]); return 2; }
    fwrite(&nd, 8, 1, o); fwrite(o_t, 8, nd, o); fwrite(o_ce, 8, nd, o);
    fclose(o);
    printf("%lld %.0f\n", (long long)nd, ns[reps / 2]);
    return 0;
}
