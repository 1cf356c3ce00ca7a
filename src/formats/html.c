/*
 * html.c -- the HTML page of a recording (html.h): one self-contained
 * page (inline CSS and JS, no network) with a zoomable timeline on a
 * <canvas> (a label per depth row), a legend of the regions' colours,
 * per-region bars of total and self time, and the summary table; and the
 * page comparing several recordings (statistics only: a runs table, bars
 * per region and run, a comparison table).
 *
 * Everything is computed here, in one pass over the span stream of any
 * timeline source (sps__tlr_*: .h5, .json, .json.gz, .pftrace):
 *   - per-region statistics over ALL spans (calls, total, self, min, max)
 *     by the one fold (model/fold.c: sps__fold_tl);
 *   - the spans embedded for the timeline, at most max_spans of them: the
 *     library's min-heap (util.h: sps__heap, key the duration, evict_cmp
 *     for equal ones) keeps the longest (every span longer than the
 *     longest one left out; among spans of exactly that length the
 *     earliest, then the shallowest, then the one of the lowest thread
 *     index).  Since a parent is never shorter than its child and wins
 *     ties against it, every kept span's ancestors are kept too.
 * Memory: O(regions + threads * depth + embedded spans).

 */
#include "formats/html.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Statistics of one region (span name). */
typedef struct rstat {
    uint64_t calls;
    int64_t total, self, min, max;
} rstat_t;

/* A span kept for the timeline. */
typedef struct kspan {
    int64_t start, dur;
    uint32_t name, thread, depth;
} kspan_t;

/* The whole state of one run. */
typedef struct html_state {
    const sps__tl_header_t *h;
    sps__fold_tl_t fold; /* the one fold: nesting and self time per thread */
    rstat_t *stats;     /* per name (from the fold, at the end) */
    kspan_t *kept;      /* the spans kept, nkept of them (room for keptcap,
                         * at most cap); sorted for the page at the end */
    size_t nkept, keptcap, cap;
    sps__heap_t heap;   /* over kept[] while reading: the next to go first */
    uint64_t nspans, dropped_any;
    int64_t dropped_max; /* longest duration left out (valid if dropped_any) */
    int64_t t0, t1;      /* first start, last end */
    void (*progress)(uint64_t done, uint64_t total, int final); /* or NULL */
} html_state_t;

/* The order in which spans of equal duration leave the timeline, < 0
 * when a goes before b: the later start first, then the deeper (so that
 * earlier spans survive ties, and a parent as long as its child outlives
 * it), then the higher thread index (so that which spans are kept never
 * depends on the heap's arrangement). */
static int evict_cmp(const kspan_t *a, const kspan_t *b) {
    if (a->start != b->start) return a->start > b->start ? -1 : 1;
    if (a->depth != b->depth) return a->depth > b->depth ? -1 : 1;
    if (a->thread != b->thread) return a->thread > b->thread ? -1 : 1;
    return 0;
}

/* The heap's tie-breaker: evict_cmp of kept spans a and b (ctx: the
 * html_state_t). */
static int evict_tie(void *ctx, uint32_t a, uint32_t b) {
    const html_state_t *S = ctx;
    return evict_cmp(&S->kept[a], &S->kept[b]);
}

/* The heap key of a duration: the shortest comes first. */
static uint64_t dur_key(int64_t dur) { return sps__heap_key_i64(dur); }

/* Notes that a span of duration d is left out of the timeline. */
static void note_dropped(html_state_t *S, int64_t d) {
    if (!S->dropped_any || d > S->dropped_max) S->dropped_max = d;
    S->dropped_any = 1;
}

/* Makes room in S->kept (and the heap) for one more span: both start
 * with room for the spans the source says it has, which is only an
 * estimate, and double, to S->cap at most.  Needs S->keptcap > 0 (set
 * whenever S->cap is).  Returns 0 or SPS_ENOMEM. */
static int kept_room(html_state_t *S) {
    if (S->nkept < S->keptcap) return 0;
    size_t nc = S->keptcap <= S->cap / 2 ? S->keptcap * 2 : S->cap;
    kspan_t *v = realloc(S->kept, nc * sizeof *v);
    if (!v) return SPS_ENOMEM;
    S->kept = v;
    S->keptcap = nc;
    return sps__heap_reserve(&S->heap, nc) ? SPS_ENOMEM : 0;
}

/* Offers span k to the timeline: kept while among the cap longest (in
 * the order of evict_cmp among equals), the span it pushes out noted as
 * dropped.  Returns 0 or SPS_ENOMEM. */
static int keep_offer(html_state_t *S, const kspan_t *k) {
    if (S->cap == 0) {
        note_dropped(S, k->dur);
        return 0;
    }
    if (S->nkept < S->cap) {
        if (kept_room(S)) return SPS_ENOMEM;
        S->kept[S->nkept] = *k;
        if (sps__heap_push(&S->heap, dur_key(k->dur), (uint32_t)S->nkept))
            return SPS_ENOMEM; /* not with the room kept_room made */
        S->nkept++;
        return 0;
    }
    kspan_t *first = &S->kept[sps__heap_top(&S->heap).idx];
    if (first->dur > k->dur || (first->dur == k->dur && evict_cmp(first, k) >= 0)) {
        note_dropped(S, k->dur); /* k would go first: it is not kept */
        return 0;
    }
    note_dropped(S, first->dur);
    *first = *k; /* k takes the slot of the span it pushes out */
    sps__heap_update_top(&S->heap, dur_key(k->dur));
    return 0;
}

/* Takes span s into the statistics and the timeline.  Returns 0,
 * SPS_EFORMAT (bad indices) or SPS_ENOMEM. */
static int take_span(html_state_t *S, const sps__tl_span_t *s) {
    const sps__tl_header_t *h = S->h;
    if (s->name >= h->nnames || s->thread >= h->nthreads || s->end_ns < s->start_ns) {
        sps__err_set("span %" PRIu64 " names no region or thread, or ends "
                           "before it starts", S->nspans);
        return SPS_EFORMAT;
    }
    if (S->nspans == 0 || s->start_ns < S->t0) S->t0 = s->start_ns;
    if (S->nspans == 0 || s->end_ns > S->t1) S->t1 = s->end_ns;
    S->nspans++;
    int64_t depth = sps__fold_tl_add(&S->fold, s->thread, s->name, s->start_ns, s->end_ns, s->prior_ns);
    if (depth < 0) return (int)depth;
    kspan_t k = {s->start_ns, s->end_ns - s->start_ns, s->name, s->thread,
                 (uint32_t)depth};
    return keep_offer(S, &k);
}

/* Closes every open span of the fold and takes its statistics. */
static void finish_stacks(html_state_t *S) {
    sps__fold_tl_finish(&S->fold);
    for (size_t i = 0; i < S->h->nnames; i++) {
        const sps__acc_t *a = &S->fold.acc[i];
        S->stats[i] = (rstat_t){a->count, (int64_t)a->total, (int64_t)a->self,
                                a->count ? (int64_t)a->min : 0,
                                a->count ? (int64_t)a->max : 0};
    }
}

/* Order of embedded spans: by thread, then start, then depth. */
static int kspan_cmp(const void *pa, const void *pb) {
    const kspan_t *a = pa, *b = pb;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return 0;
}

/* Sorts the kept spans for the page; the heap is done with. */
static void finish_kept(html_state_t *S) {
    sps__heap_free(&S->heap);
    if (S->nkept) /* with max_spans 0 there is no array (qsort wants one) */
        qsort(S->kept, S->nkept, sizeof *S->kept, kspan_cmp);
}

/* The region palette, most distinct first.  Picked (greedy farthest point
 * in CIELAB) among the sRGB colours of lightness 52..80 and chroma 32..62 --
 * light enough for the dark label text, saturated enough never to read as
 * the page's greys -- to lie as far apart as possible: the first 20 are at
 * least 28 CIELAB units (dE76) apart, all 32 at least 21.  A hash of the
 * name to a hue, as before, gave colliding colours (two names of 20 landing
 * a few degrees apart was the common case). */
static const char *const k_palette[] = {
    "#507dc3", "#e1c34b", "#f05a73", "#00dcbe", "#ff9bfa", "#468c28", "#a5734b",
    "#00d2ff", "#faaabe", "#008c8c", "#ff8c55", "#afcd82", "#9169d2", "#be5a91",
    "#878223", "#5fd782", "#c3b4ff", "#af6e05", "#ebbe87", "#059664", "#b96469",
    "#0f8cb4", "#82befa", "#96b43c", "#6991ff", "#ffa08c", "#5fcdcd", "#cd5a46",
    "#78c39b", "#faaf55", "#c35fbe", "#ff6eaa"};
#define PALETTE_N (sizeof k_palette / sizeof *k_palette)

/* One channel of HSL to RGB (h in turns, s and l in 0..1), 0..255. */
static unsigned hsl_channel(double h, double s, double l) {
    double q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
    h -= floor(h);
    double v = h < 1.0 / 6 ? p + (q - p) * 6 * h
             : h < 0.5     ? q
             : h < 2.0 / 3 ? p + (q - p) * (2.0 / 3 - h) * 6
                           : p;
    return (unsigned)lround(v * 255);
}

/* The colour of colour slot i (slot 0: the region with the most total
 * time) as "#rrggbb" in buf: the palette's, and past its end a hue a
 * golden angle (137.5 degrees) on from the slot before, at one of three
 * lightnesses in turn, so that neighbours still differ. */
static const char *slot_color(char buf[8], size_t i) {
    if (i < PALETTE_N) return k_palette[i];
    double h = fmod((double)(i - PALETTE_N) * 0.381966 + 0.07, 1.0);
    double l = (const double[]){0.62, 0.50, 0.72}[(i - PALETTE_N) % 3];
    snprintf(buf, 8, "#%02x%02x%02x", hsl_channel(h + 1.0 / 3, 0.6, l),
             hsl_channel(h, 0.6, l), hsl_channel(h - 1.0 / 3, 0.6, l));
    return buf;
}

/* The colour slot of every name of h: the n regions of ord (those with
 * calls, most total time first) take slots 0..n-1 in that order, the
 * names without calls the slots after.  Returns the array (the caller
 * frees it) or NULL when out of memory. */
static uint32_t *color_slots(const sps__tl_header_t *h, const uint32_t *ord, size_t n) {
    uint32_t *slot = malloc((h->nnames ? h->nnames : 1) * sizeof *slot);
    if (!slot) return NULL;
    for (size_t i = 0; i < h->nnames; i++) slot[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) slot[ord[i]] = (uint32_t)i;
    uint32_t next = (uint32_t)n;
    for (size_t i = 0; i < h->nnames; i++)
        if (slot[i] == UINT32_MAX) slot[i] = next++;
    return slot;
}

/* Writes s as a quoted JSON string of the page's data blob, by the
 * library's one escaper (util.h: invalid UTF-8 as U+FFFD), with every '<'
 * as \u003c so that no name can end the <script> element the blob stands
 * in. */
static void put_json_str(FILE *fp, const char *s) {
    fputc('"', fp);
    sps__json_fputs(fp, s, SPS__JSON_IN_SCRIPT);
    fputc('"', fp);
}

/* Writes s with HTML's special characters escaped. */
static void put_html(FILE *fp, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '"': fputs("&quot;", fp); break;
        case '\'': fputs("&#39;", fp); break;
        default: fputc(*s, fp);
        }
    }
}

/* Formats a duration in ns as text ("1.23 ms") into buf. */
static const char *fmt_ns(char *buf, size_t n, double ns) {
    if (ns < 1e3) snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6) snprintf(buf, n, "%.2f \xc2\xb5s", ns / 1e3);
    else if (ns < 1e9) snprintf(buf, n, "%.2f ms", ns / 1e6);
    else snprintf(buf, n, "%.3f s", ns / 1e9);
    return buf;
}

static const char page_css[] =
    "body{font:13px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;"
    "margin:16px;color:#222;background:#fafafa}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}\n"
    ".meta{color:#555;margin-bottom:8px}\n"
    "#tlwrap{position:relative;border:1px solid #ccc;background:#fff;"
    "max-height:640px;overflow-y:auto;overflow-x:hidden}\n"
    "#tl{display:block;cursor:grab}\n"
    "#tip{position:fixed;pointer-events:none;background:#222;color:#fff;"
    "padding:4px 8px;border-radius:4px;font-size:12px;display:none;z-index:9;"
    "white-space:pre}\n"
    ".bar-row{display:flex;align-items:center;margin:2px 0}\n"
    ".bar-name{width:240px;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap;padding-right:8px;text-align:right}\n"
    ".bar-track{flex:1;position:relative;height:16px;background:#eee}\n"
    ".bar-total,.bar-self{position:absolute;left:0;top:0;height:100%}\n"
    ".bar-total{opacity:.4}\n"
    ".bar-val{width:190px;padding-left:8px;color:#444;white-space:nowrap}\n"
    "table{border-collapse:collapse;background:#fff}\n"
    "th,td{border:1px solid #ddd;padding:3px 8px}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    "th{background:#f0f0f0;cursor:pointer;user-select:none}\n"
    "button{font:inherit;margin:0 6px 6px 0}\n"
    ".note{color:#8a5300}\n"
    "#legend{display:flex;flex-wrap:wrap;gap:3px 14px;margin:6px 0 8px}\n"
    ".lg{display:inline-flex;align-items:center;white-space:nowrap}\n"
    ".sw{display:inline-block;width:12px;height:12px;margin-right:5px;border-radius:2px}\n"
    ".bar-run{width:60px;color:#555;text-align:right;padding-right:6px;white-space:nowrap;"
    "overflow:hidden;text-overflow:ellipsis}\n"
    ".up{color:#b00020}.down{color:#1b7a2c}\n";

/* The page's script: the timeline (canvas, zoom, pan, tooltip) and table
 * sorting.  Reads the JSON blob of <script id="spsdata">. */
static const char page_js[] =
    "(function(){'use strict';\n"
    "var D=JSON.parse(document.getElementById('spsdata').textContent);\n"
    "function fmt(ns){var a=Math.abs(ns);if(a<1e3)return ns.toFixed(0)+' ns';"
    "if(a<1e6)return (ns/1e3).toFixed(2)+' \\u00b5s';if(a<1e9)return (ns/1e6).toFixed(2)+' ms';"
    "return (ns/1e9).toFixed(3)+' s';}\n"
    "var ROW=16,GAP=6,HDR=18,LBL=210,AX=22;\n"
    "var cv=document.getElementById('tl'),wrap=document.getElementById('tlwrap'),"
    "tip=document.getElementById('tip'),ctx=cv.getContext('2d');\n"
    /* lanes: one per thread, ordered by process then thread */
    "var lanes=[],byThread={};\n"
    "D.threads.forEach(function(t,i){var L={t:i,pid:t[0],tid:t[1],name:t[2],proc:t[3],"
    "st:[],du:[],nm:[],dp:[],rows:[],maxd:0};byThread[i]=L;lanes.push(L);});\n"
    "D.lanes.forEach(function(e){var L=byThread[e[0]],a=e[1],s=0;"
    "for(var i=0;i<a.length;i+=4){s+=a[i+1];var d=a[i+3];L.nm.push(a[i]);L.st.push(s);"
    "L.du.push(a[i+2]);L.dp.push(d);if(d>L.maxd)L.maxd=d;"
    "(L.rows[d]||(L.rows[d]=[])).push(L.st.length-1);}});\n"
    "lanes.sort(function(a,b){return a.proc-b.proc||a.t-b.t;});\n"
    "var y=AX,lastProc=-1;lanes.forEach(function(L){if(L.proc!==lastProc){"
    "L.hdr=y;y+=HDR;lastProc=L.proc;}L.y=y;L.h=(L.maxd+1)*ROW;y+=L.h+GAP;});\n"
    /* counters: one lane each, below the threads, drawn as steps */
    "var CH=44,clanes=(D.counters||[]).map(function(c){var ts=[],vs=[],mn=Infinity,mx=-Infinity;"
    "for(var i=0;i<c[2].length;i+=2){ts.push(c[2][i]);vs.push(c[2][i+1]);"
    "if(c[2][i+1]<mn)mn=c[2][i+1];if(c[2][i+1]>mx)mx=c[2][i+1];}"
    "var L={name:D.names[c[0]],proc:c[1],ts:ts,vs:vs,mn:mn,mx:mx,y:y+HDR,h:CH};y+=HDR+CH+GAP;return L;});\n"
    "var H=Math.min(y,30000),T0=0,T1=Math.max(1,D.t1-D.t0),v0=T0,v1=T1,W=0;\n"
    "function resize(){var dpr=window.devicePixelRatio||1;W=wrap.clientWidth;"
    "cv.style.width=W+'px';cv.style.height=H+'px';cv.width=Math.round(W*dpr);"
    "cv.height=Math.round(H*dpr);ctx.setTransform(dpr,0,0,dpr,0,0);draw();}\n"
    "function xOf(t){return LBL+(t-v0)/(v1-v0)*(W-LBL);}\n"
    "function tOf(x){return v0+(x-LBL)/(W-LBL)*(v1-v0);}\n"
    "function color(n){return D.colors[n];}\n"
    /* first index in row (sorted, disjoint) whose end >= t */
    "function firstEnd(L,row,t){var lo=0,hi=row.length;while(lo<hi){var m=(lo+hi)>>1,"
    "k=row[m];if(L.st[k]+L.du[k]<t)lo=m+1;else hi=m;}return lo;}\n"
    "function draw(){var n=0;ctx.clearRect(0,0,W,H);ctx.font='11px sans-serif';"
    "ctx.textBaseline='middle';var top=wrap.scrollTop-40,bot=wrap.scrollTop+wrap.clientHeight+40;\n"
    "ctx.save();ctx.beginPath();ctx.rect(LBL,0,W-LBL,H);ctx.clip();\n"
    "lanes.forEach(function(L){if(L.y+L.h<top||L.y>bot)return;"
    "for(var d=0;d<L.rows.length;d++){var row=L.rows[d];if(!row)continue;"
    "var yy=L.y+d*ROW,lastX=-1;for(var i=firstEnd(L,row,v0);i<row.length;i++){var k=row[i],"
    "s=L.st[k];if(s>v1)break;var x0=xOf(s),x1=xOf(s+L.du[k]);if(x1<lastX+0.5&&x1-x0<1)continue;"
    "if(x0<LBL-2)x0=LBL-2;if(x1>W+2)x1=W+2;var w=Math.max(1,x1-x0);"
    "ctx.fillStyle=color(L.nm[k]);ctx.fillRect(x0,yy+1,w,ROW-2);n++;lastX=x0+w;"
    "if(w>40){ctx.fillStyle='#111';var nm=D.names[L.nm[k]];var tw=Math.floor((w-6)/6.2);"
    "if(tw>2)ctx.fillText(nm.length>tw?nm.slice(0,tw-1)+'\\u2026':nm,x0+3,yy+ROW/2);}}}});\n"
    "var nc=0;clanes.forEach(function(C){if(C.y+C.h<top||C.y>bot||!C.ts.length)return;"
    "var span=C.mx-C.mn||1,yOf=function(v){return C.y+C.h-2-(v-C.mn)/span*(C.h-4);};"
    "ctx.strokeStyle='#3c6fb4';ctx.fillStyle='rgba(60,120,200,0.18)';"
    "ctx.beginPath();var px=xOf(C.ts[0]),py=yOf(C.vs[0]);ctx.moveTo(px,C.y+C.h);ctx.lineTo(px,py);"
    "for(var i=1;i<C.ts.length;i++){var x=xOf(C.ts[i]);ctx.lineTo(x,py);py=yOf(C.vs[i]);ctx.lineTo(x,py);}"
    "ctx.lineTo(W+2,py);ctx.lineTo(W+2,C.y+C.h);ctx.closePath();ctx.fill();ctx.stroke();nc++;});\n"
    "ctx.restore();\n"
    /* labels, process headers, axis */
    "ctx.fillStyle='#fff';ctx.fillRect(0,0,LBL,H);ctx.fillStyle='#222';var ndl=0;"
    "lanes.forEach(function(L){if(L.hdr!==undefined){ctx.fillStyle='#e8e8f0';"
    "ctx.fillRect(0,L.hdr,W,HDR-2);ctx.fillStyle='#222';ctx.font='bold 12px sans-serif';"
    "ctx.fillText(D.procs[L.proc]||'process',4,L.hdr+HDR/2);}"
    "ctx.font='11px sans-serif';ctx.fillStyle='#333';"
    "ctx.fillText((L.name||('thread '+L.tid)).slice(0,22),8,L.y+ROW/2);"
    /* a label per depth row: which level of the call tree it shows */
    "ctx.fillStyle='#888';ctx.textAlign='right';for(var d=0;d<=L.maxd;d++){"
    "ctx.fillText('depth '+d,LBL-6,L.y+d*ROW+ROW/2);ndl++;}ctx.textAlign='left';"
    "ctx.strokeStyle='#eee';ctx.beginPath();ctx.moveTo(0,L.y+L.h+GAP/2);"
    "ctx.lineTo(W,L.y+L.h+GAP/2);ctx.stroke();});\n"
    "clanes.forEach(function(C){ctx.fillStyle='#eef3ea';ctx.fillRect(0,C.y-HDR,W,HDR-2);"
    "ctx.fillStyle='#222';ctx.font='bold 12px sans-serif';ctx.fillText('counter: '+C.name+"
    "' ('+(D.procs[C.proc]||'process')+')',4,C.y-HDR/2);ctx.font='11px sans-serif';"
    "ctx.fillStyle='#333';ctx.fillText('max '+C.mx.toPrecision(4),8,C.y+8);"
    "ctx.fillText('min '+C.mn.toPrecision(4),8,C.y+C.h-8);});\n"
    "ctx.fillStyle='#f6f6f6';ctx.fillRect(0,0,W,AX);ctx.strokeStyle='#bbb';ctx.fillStyle='#444';"
    "var span=v1-v0,step=Math.pow(10,Math.floor(Math.log10(span/8)));"
    "if(span/step>16)step*=5;else if(span/step>8)step*=2;"
    "for(var t=Math.ceil(v0/step)*step;t<=v1;t+=step){var x=xOf(t);ctx.beginPath();"
    "ctx.moveTo(x,AX-6);ctx.lineTo(x,AX);ctx.stroke();ctx.fillText(fmt(t),x+2,AX/2-1);}\n"
    "cv.setAttribute('data-drawn',String(n));cv.setAttribute('data-counters',String(nc));"
    "cv.setAttribute('data-depth-labels',String(ndl));}\n"
    "function hit(ev){var r=cv.getBoundingClientRect(),x=ev.clientX-r.left,y=ev.clientY-r.top;"
    "if(x<LBL)return null;var t=tOf(x);for(var i=0;i<lanes.length;i++){var L=lanes[i];"
    "if(y<L.y||y>=L.y+L.h)continue;var d=Math.floor((y-L.y)/ROW),row=L.rows[d];if(!row)return null;"
    "var j=firstEnd(L,row,t);if(j<row.length){var k=row[j];var px=(v1-v0)/(W-LBL);"
    "if(L.st[k]<=t+px&&L.st[k]+L.du[k]>=t-px)return {L:L,k:k};}return null;}return null;}\n"
    "var drag=null;\n"
    "cv.addEventListener('mousedown',function(e){drag={x:e.clientX,v0:v0,v1:v1};"
    "cv.style.cursor='grabbing';});\n"
    "window.addEventListener('mouseup',function(){drag=null;cv.style.cursor='grab';});\n"
    "window.addEventListener('mousemove',function(e){if(drag){var dt=(e.clientX-drag.x)/(W-LBL)*"
    "(drag.v1-drag.v0);v0=drag.v0-dt;v1=drag.v1-dt;tip.style.display='none';draw();return;}"
    "if(e.target!==cv){tip.style.display='none';return;}var h=hit(e);"
    "if(!h){tip.style.display='none';return;}var L=h.L,k=h.k;"
    "tip.textContent=D.names[L.nm[k]]+'\\nstart: '+fmt(L.st[k])+'\\nduration: '+fmt(L.du[k])+"
    "'\\n'+(D.procs[L.proc]||'')+' / '+(L.name||('thread '+L.tid));"
    "tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';"
    "tip.style.display='block';});\n"
    "cv.addEventListener('wheel',function(e){e.preventDefault();var r=cv.getBoundingClientRect(),"
    "x=Math.max(LBL,e.clientX-r.left),t=tOf(x),f=Math.exp((e.deltaY||0)*0.0015);"
    "var nw=Math.max(1e-3*1,Math.min((v1-v0)*f,(T1-T0)*4));v0=t-(t-v0)*nw/(v1-v0);v1=v0+nw;draw();},"
    "{passive:false});\n"
    "wrap.addEventListener('scroll',draw);window.addEventListener('resize',resize);\n"
    "document.getElementById('reset').addEventListener('click',function(){v0=T0;v1=T1;draw();});\n"
    "document.getElementById('zin').addEventListener('click',function(){var c=(v0+v1)/2,"
    "w=(v1-v0)/4;v0=c-w;v1=c+w;draw();});\n"
    "document.getElementById('zout').addEventListener('click',function(){var c=(v0+v1)/2,"
    "w=(v1-v0);v0=c-w;v1=c+w;draw();});\n"
    "resize();\n"
    "})();\n";

/* Sorting of the summary table (#stats: its markup is what other tools
 * parse, so it carries no class) and of every table of class "sortable"
 * by a click on a column's header: by the cells' data-v, as text in the
 * first column and as numbers in the others (cells without data-v last). */
static const char sort_js[] =
    "(function(){'use strict';\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table#stats,table.sortable'),function(tb){"
    "Array.prototype.forEach.call(tb.tHead.rows[tb.tHead.rows.length-1].cells,"
    "function(th,ci){var asc=false;th.addEventListener('click',function(){asc=!asc;"
    "var rows=Array.prototype.slice.call(tb.tBodies[0].rows);rows.sort(function(a,b){"
    "var x=a.cells[ci].getAttribute('data-v'),y=b.cells[ci].getAttribute('data-v');"
    "if(x===null||y===null)return (x===null)-(y===null);"
    "var c=ci===0?x.localeCompare(y):(+x)-(+y);return asc?c:-c;});"
    "rows.forEach(function(r){tb.tBodies[0].appendChild(r);});});});});\n"
    "})();\n";

/* Region order for bars and table (qsort_r over region ids, ctx the
 * rstat_t array): total time, descending, then id. */
static int by_total(const void *pa, const void *pb, void *ctx) {
    const rstat_t *stats = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ta = stats[a].total, tb = stats[b].total;
    if (ta != tb) return ta > tb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Most points drawn per counter series: longer series are thinned to the
 * minimum and the maximum of each of COUNTER_POINTS / 2 time buckets. */
#define COUNTER_POINTS 4000

/* Writes one series (samples idx[0..n), n > 0, of the header's counters,
 * all finite: write_counters leaves NaN/inf out, as JSON has no literal
 * for them and the bucket min/max comparisons would be meaningless) as
 * [name, process, [t, v, t, v, ...]] with t relative to S->t0. */
static void write_series(FILE *fp, const html_state_t *S, const size_t *idx, size_t n) {
    const sps__tl_counter_t *c = S->h->counters;
    fprintf(fp, "[%u,%u,[", c[idx[0]].name, c[idx[0]].proc);
    size_t buckets = n > COUNTER_POINTS ? COUNTER_POINTS / 2 : n;
    int first = 1;
    for (size_t b = 0; b < buckets; b++) {
        size_t lo = b * n / buckets, hi = (b + 1) * n / buckets, mn = lo, mx = lo;
        for (size_t i = lo; i < hi; i++) {
            if (c[idx[i]].value < c[idx[mn]].value) mn = i;
            if (c[idx[i]].value > c[idx[mx]].value) mx = i;
        }
        size_t pick[2] = {mn < mx ? mn : mx, mn < mx ? mx : mn};
        for (int k = 0; k < (mn == mx ? 1 : 2); k++) {
            const sps__tl_counter_t *x = &c[idx[pick[k]]];
            fprintf(fp, "%s%" PRId64 ",%.9g", first ? "" : ",", x->ts_ns - S->t0, x->value);
            first = 0;
        }
    }
    fputs("]]", fp);
}

/* Orders sample indexes by (name, process, time, index): one sort groups
 * the series, each in time order (the index keeps equal times stable).
 * qsort_r with ctx the header's counters. */
static int by_series(const void *pa, const void *pb, void *ctx) {
    const sps__tl_counter_t *counters = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const sps__tl_counter_t *x = &counters[a], *y = &counters[b];
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Writes every counter series of the header (one per name and process)
 * with its finite samples; a series without any is left out.  Sorting an
 * index array once keeps this O(n log n) in the samples. */
static void write_counters(FILE *fp, const html_state_t *S) {
    const sps__tl_header_t *h = S->h;
    size_t *idx = malloc((h->ncounters + 1) * sizeof *idx);
    if (!idx) return;
    size_t m = 0;
    for (size_t i = 0; i < h->ncounters; i++)
        if (isfinite(h->counters[i].value)) idx[m++] = i; /* JSON has no NaN/inf */
    qsort_r(idx, m, sizeof *idx, by_series, (void *)h->counters);
    for (size_t i = 0, j; i < m; i = j) {
        const sps__tl_counter_t *c = &h->counters[idx[i]];
        for (j = i + 1; j < m && h->counters[idx[j]].name == c->name &&
                        h->counters[idx[j]].proc == c->proc;)
            j++;
        if (i) fputc(',', fp);
        write_series(fp, S, idx + i, j - i);
    }
    free(idx);
}

/* Writes the JSON blob: names, colours ("#rrggbb" per name, by its slot),
 * processes, threads, and the kept
 * spans per thread as [name, start delta, duration, depth] quadruples
 * (start relative to the first span, delta from the previous start in the
 * lane). */
static void write_json(FILE *fp, const html_state_t *S, const uint32_t *slot) {
    const sps__tl_header_t *h = S->h;
    fprintf(fp, "{\"t0\":0,\"t1\":%" PRId64 ",\"nspans\":%" PRIu64
            ",\"kept\":%zu,\"names\":[", S->t1 - S->t0, S->nspans, S->nkept);
    for (size_t i = 0; i < h->nnames; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, h->names[i] ? h->names[i] : "");
    }
    fputs("],\"colors\":[", fp);
    for (size_t i = 0; i < h->nnames; i++) {
        char b[8];
        fprintf(fp, "%s\"%s\"", i ? "," : "", slot_color(b, slot[i]));
    }
    fputs("],\"procs\":[", fp);
    for (size_t i = 0; i < h->nprocs; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, h->procs[i].name ? h->procs[i].name : "");
    }
    fputs("],\"threads\":[", fp);
    for (size_t i = 0; i < h->nthreads; i++) {
        size_t p = 0;
        while (p < h->nprocs && h->procs[p].pid != h->threads[i].pid) p++;
        fprintf(fp, "%s[%" PRId64 ",%" PRId64 ",", i ? "," : "", h->threads[i].pid,
                h->threads[i].tid);
        put_json_str(fp, h->threads[i].name ? h->threads[i].name : "");
        fprintf(fp, ",%zu]", p);
    }
    fputs("],\"lanes\":[", fp);
    size_t i = 0;
    int first = 1;
    while (i < S->nkept) {
        uint32_t t = S->kept[i].thread;
        int64_t prev = 0;
        fprintf(fp, "%s[%u,[", first ? "" : ",", t);
        first = 0;
        for (int f2 = 1; i < S->nkept && S->kept[i].thread == t; i++, f2 = 0) {
            const kspan_t *k = &S->kept[i];
            int64_t s = k->start - S->t0;
            fprintf(fp, "%s%u,%" PRId64 ",%" PRId64 ",%u", f2 ? "" : ",", k->name,
                    s - prev, k->dur, k->depth);
            prev = s;
        }
        fputs("]]", fp);
    }
    fputs("],\"counters\":[", fp);
    write_counters(fp, S);
    fputs("]}", fp);
}

/* Writes the legend: a swatch of each region's colour and its name, in
 * order ord (n regions); slot: the colour slot per name. */
static void write_legend(FILE *fp, const char *const *names, const uint32_t *ord,
                         size_t n, const uint32_t *slot) {
    fputs("<div id=\"legend\">", fp);
    for (size_t i = 0; i < n; i++) {
        char b[8];
        const char *nm = names[ord[i]] ? names[ord[i]] : "";
        fprintf(fp, "<span class=\"lg\"><span class=\"sw\" style=\"background:%s\"></span>",
                slot_color(b, slot[ord[i]]));
        put_html(fp, nm);
        fputs("</span>", fp);
    }
    fputs("</div>\n", fp);
}

/* Writes the bars of total and self time per region, in order ord, each
 * in the colour of its slot. */
static void write_bars(FILE *fp, const html_state_t *S, const uint32_t *ord,
                       size_t n, const uint32_t *slot) {
    int64_t mx = n ? S->stats[ord[0]].total : 0;
    char b1[32], b2[32];
    fputs("<h2>Time per region</h2>\n<div class=\"meta\">light bar: total "
          "(inclusive) time; dark bar: self (exclusive) time</div>\n<div id=\"bars\">\n", fp);
    for (size_t i = 0; i < n; i++) {
        const rstat_t *r = &S->stats[ord[i]];
        const char *nm = S->h->names[ord[i]] ? S->h->names[ord[i]] : "";
        double wt = mx > 0 ? 100.0 * (double)r->total / (double)mx : 0;
        double ws = mx > 0 ? 100.0 * (double)r->self / (double)mx : 0;
        char col[8];
        const char *c = slot_color(col, slot[ord[i]]);
        fputs("<div class=\"bar-row\"><div class=\"bar-name\" title=\"", fp);
        put_html(fp, nm);
        fputs("\">", fp);
        put_html(fp, nm);
        fprintf(fp, "</div><div class=\"bar-track\"><div class=\"bar-total\" "
                "style=\"width:%.2f%%;background:%s\"></div>"
                "<div class=\"bar-self\" style=\"width:%.2f%%;background:%s\">"
                "</div></div><div class=\"bar-val\">%s / self %s</div></div>\n",
                wt, c, ws, c, fmt_ns(b1, sizeof b1, (double)r->total),
                fmt_ns(b2, sizeof b2, (double)r->self));
    }
    fputs("</div>\n", fp);
}

/* Writes one numeric cell of the table (a time in ns, or a count). */
static void cell_ns(FILE *fp, double v) {
    char b[32];
    fprintf(fp, "<td class=\"n\" data-v=\"%.0f\">%s</td>", v, fmt_ns(b, sizeof b, v));
}

/* Writes the summary table, in order ord. */
static void write_table(FILE *fp, const html_state_t *S, const uint32_t *ord,
                        size_t n) {
    fputs("<h2>Summary</h2>\n<table id=\"stats\"><thead><tr><th>region</th>"
          "<th>calls</th><th>total</th><th>self</th><th>mean</th><th>min</th>"
          "<th>max</th></tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < n; i++) {
        const rstat_t *r = &S->stats[ord[i]];
        const char *nm = S->h->names[ord[i]] ? S->h->names[ord[i]] : "";
        fputs("<tr><td data-v=\"", fp);
        put_html(fp, nm);
        fputs("\">", fp);
        put_html(fp, nm);
        fprintf(fp, "</td><td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>",
                r->calls, r->calls);
        cell_ns(fp, (double)r->total);
        cell_ns(fp, (double)r->self);
        cell_ns(fp, (double)r->total / (double)r->calls);
        cell_ns(fp, (double)r->min);
        cell_ns(fp, (double)r->max);
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

/* Writes the whole page to fp.  Returns 0 or SPS_ENOMEM. */
static int write_page(FILE *fp, const html_state_t *S, const char *title) {
    const sps__tl_header_t *h = S->h;
    size_t n = 0;
    uint32_t *ord = malloc((h->nnames ? h->nnames : 1) * sizeof *ord);
    if (!ord) return SPS_ENOMEM;
    for (size_t i = 0; i < h->nnames; i++)
        if (S->stats[i].calls) ord[n++] = (uint32_t)i;
    qsort_r(ord, n, sizeof *ord, by_total, S->stats);
    uint32_t *slot = color_slots(h, ord, n);
    if (!slot) {
        free(ord);
        return SPS_ENOMEM;
    }
    char b[32];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
          "<title>spanscope: ", fp);
    put_html(fp, title);
    fprintf(fp, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>spanscope: ", page_css);
    put_html(fp, title);
    fprintf(fp, "</h1>\n<div class=\"meta\">%" PRIu64 " span%s, %zu region%s, "
            "%zu thread%s in %zu process%s, %s from first start to last end</div>\n",
            S->nspans, S->nspans == 1 ? "" : "s", n, n == 1 ? "" : "s",
            h->nthreads, h->nthreads == 1 ? "" : "s", h->nprocs,
            h->nprocs == 1 ? "" : "es",
            fmt_ns(b, sizeof b, (double)(S->nspans ? S->t1 - S->t0 : 0)));
    fputs("<h2>Timeline</h2>\n<div class=\"meta\">mouse wheel: zoom; drag: pan; "
          "hover: details. <button id=\"zin\">zoom in</button><button id=\"zout\">"
          "zoom out</button><button id=\"reset\">reset</button></div>\n", fp);
    if (S->nkept < S->nspans)
        fprintf(fp, "<div class=\"meta note\" id=\"leftout\">%" PRIu64 " of %" PRIu64
                " spans left out of the timeline to keep the page small: the shortest"
                " ones (none of them longer than %s). The statistics below cover "
                "every span.</div>\n",
                S->nspans - S->nkept, S->nspans,
                fmt_ns(b, sizeof b, (double)(S->dropped_any ? S->dropped_max : 0)));
    write_legend(fp, h->names, ord, n, slot);
    fputs("<div id=\"tlwrap\"><canvas id=\"tl\" data-drawn=\"0\"></canvas></div>\n"
          "<div id=\"tip\"></div>\n", fp);
    write_bars(fp, S, ord, n, slot);
    write_table(fp, S, ord, n);
    fputs("<script type=\"application/json\" id=\"spsdata\">", fp);
    write_json(fp, S, slot);
    fprintf(fp, "</script>\n<script>\n%s%s</script>\n</body></html>\n", page_js, sort_js);
    free(slot);
    free(ord);
    return 0;
}

/* Reads every span of r into S.  Returns 0 or a negative SPS_E* code. */
static int read_spans(sps__tlr_t *r, html_state_t *S) {
    const sps__tl_header_t *h = S->h;
    sps__tl_span_t s;
    int rc;
    if (sps__fold_tl_init(&S->fold, h->nthreads, h->nnames, 0)) return SPS_ENOMEM;
    S->stats = calloc(h->nnames ? h->nnames : 1, sizeof *S->stats);
    if (!S->stats) return SPS_ENOMEM;
    sps__heap_init(&S->heap, evict_tie, S);
    size_t hc = S->cap; /* room for the spans the source says it has */
    if (h->nspans && h->nspans < hc) hc = (size_t)h->nspans;
    if (hc) {
        S->kept = malloc(hc * sizeof *S->kept);
        if (!S->kept || sps__heap_reserve(&S->heap, hc)) return SPS_ENOMEM;
        S->keptcap = hc;
    }
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if ((rc = take_span(S, &s)) != 0) return rc;
        if ((S->nspans & 0xFFFF) == 0 && S->progress)
            S->progress(S->nspans, h->nspans, 0);
    }
    if (h->nspans >= 0x10000 && S->progress) S->progress(S->nspans, h->nspans, 1);
    if (rc < 0) return rc;
    finish_stacks(S);
    finish_kept(S);
    for (size_t i = 0; i < h->ncounters; i++) { /* the time axis covers them too */
        int64_t t = h->counters[i].ts_ns;
        int first = S->nspans == 0 && i == 0;
        if (first || t < S->t0) S->t0 = t;
        if (first || t > S->t1) S->t1 = t;
    }
    return 0;
}

/* Frees what S owns. */
static void state_free(html_state_t *S) {
    sps__fold_tl_free(&S->fold);
    free(S->stats);
    free(S->kept);
    sps__heap_free(&S->heap);
}

/* The page must stay within what SPS__HTML_MAX_SPANS_LIMIT promises. */
_Static_assert(sizeof(kspan_t) + sizeof(sps__heap_ent_t) <= 48,
               "SPS__HTML_MAX_SPANS_LIMIT");

int sps__html_write(FILE *fp, sps__tlr_t *r, const sps__html_opts_t *opt) {
    html_state_t S;
    if (!fp || !r || !opt || opt->max_spans > SPS__HTML_MAX_SPANS_LIMIT)
        return SPS_EINVAL;
    memset(&S, 0, sizeof S);
    S.h = sps__tlr_header(r);
    S.cap = opt->max_spans;
    S.progress = opt->progress;
    int rc = read_spans(r, &S);
    if (rc == 0) rc = write_page(fp, &S, opt->title ? opt->title : "");
    if (rc == 0 && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    state_free(&S);
    return rc;
}

/* --- the comparison of several runs (sps__html_write_cmp) --------------- */

/* What the comparison knows: each run's statistics (cap 0: no timeline),
 * and the regions of all runs matched by name. */
typedef struct cmp_state {
    html_state_t *runs;
    const char *const *labels;
    size_t nruns;
    const char **names; /* per region, borrowed from a run's header */
    uint32_t *ids;      /* region r's name index in run k: ids[r * nruns + k],
                         * UINT32_MAX where run k has no call of it */
    size_t nregions;
} cmp_state_t;

/* A region name of one run, to match names across runs. */
typedef struct cmp_ent {
    const char *name;
    uint32_t run, id;
} cmp_ent_t;

/* Entries by name, then run (qsort). */
static int ent_cmp(const void *pa, const void *pb) {
    const cmp_ent_t *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* The statistics of region r in run k, or NULL where it has no call. */
static const rstat_t *cmp_stat(const cmp_state_t *C, size_t r, size_t k) {
    uint32_t id = C->ids[r * C->nruns + k];
    return id == UINT32_MAX ? NULL : &C->runs[k].stats[id];
}

/* Region r's most total time over the runs. */
static int64_t cmp_max_total(const cmp_state_t *C, size_t r) {
    int64_t m = 0;
    for (size_t k = 0; k < C->nruns; k++) {
        const rstat_t *s = cmp_stat(C, r, k);
        if (s && s->total > m) m = s->total;
    }
    return m;
}

/* Region order of the comparison (qsort_r, ctx the cmp_state_t): the most
 * total time in any run first, then by name. */
static int by_max_total(const void *pa, const void *pb, void *ctx) {
    const cmp_state_t *C = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ta = cmp_max_total(C, a), tb = cmp_max_total(C, b);
    if (ta != tb) return ta > tb ? -1 : 1;
    return strcmp(C->names[a], C->names[b]);
}

/* Matches the regions (names with calls) of every run by name into
 * C->names / C->ids.  Returns 0 or SPS_ENOMEM. */
static int cmp_match(cmp_state_t *C) {
    size_t n = 0, total = 0;
    for (size_t k = 0; k < C->nruns; k++) total += C->runs[k].h->nnames;
    cmp_ent_t *e = malloc((total ? total : 1) * sizeof *e);
    if (!e) return SPS_ENOMEM;
    for (size_t k = 0; k < C->nruns; k++) {
        const html_state_t *S = &C->runs[k];
        for (size_t i = 0; i < S->h->nnames; i++)
            if (S->stats[i].calls)
                e[n++] = (cmp_ent_t){S->h->names[i] ? S->h->names[i] : "", (uint32_t)k,
                                     (uint32_t)i};
    }
    qsort(e, n, sizeof *e, ent_cmp);
    C->names = malloc((n ? n : 1) * sizeof *C->names);
    C->ids = malloc((n ? n : 1) * C->nruns * sizeof *C->ids);
    if (!C->names || !C->ids) {
        free(e);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(e[i].name, e[i - 1].name)) {
            C->names[C->nregions] = e[i].name;
            for (size_t k = 0; k < C->nruns; k++)
                C->ids[C->nregions * C->nruns + k] = UINT32_MAX;
            C->nregions++;
        }
        C->ids[(C->nregions - 1) * C->nruns + e[i].run] = e[i].id;
    }
    free(e);
    return 0;
}

/* Writes the table of the runs: label, spans, regions, threads,
 * processes, first start to last end. */
static void cmp_write_runs(FILE *fp, const cmp_state_t *C) {
    char b[32];
    fputs("<h2>Runs</h2>\n<table id=\"runs\"><thead><tr><th>#</th><th>run</th><th>spans</th>"
          "<th>regions</th><th>threads</th><th>processes</th><th>first start to last end</th>"
          "</tr></thead><tbody>\n", fp);
    for (size_t k = 0; k < C->nruns; k++) {
        const html_state_t *S = &C->runs[k];
        size_t nreg = 0;
        for (size_t i = 0; i < S->h->nnames; i++) nreg += S->stats[i].calls != 0;
        fprintf(fp, "<tr><td>#%zu</td><td>", k + 1);
        put_html(fp, C->labels[k]);
        fprintf(fp, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%zu</td>"
                "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%s</td></tr>\n",
                S->nspans, nreg, S->h->nthreads, S->h->nprocs,
                fmt_ns(b, sizeof b, (double)(S->nspans ? S->t1 - S->t0 : 0)));
    }
    fputs("</tbody></table>\n", fp);
}

/* Writes per region (in order ord, colour by slot) one bar of total time
 * and one of self time per run, all on the scale of the longest total. */
static void cmp_write_bars(FILE *fp, const cmp_state_t *C, const uint32_t *ord,
                           const uint32_t *slot) {
    int64_t mx = C->nregions ? cmp_max_total(C, ord[0]) : 0;
    char b1[32], b2[32], col[8];
    fputs("<h2>Time per region and run</h2>\n<div class=\"meta\">per region one bar per run "
          "(#1, #2, ...: the table above); light bar: total (inclusive) time; dark bar: "
          "self (exclusive) time</div>\n<div id=\"bars\">\n", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        uint32_t r = ord[i];
        const char *c = slot_color(col, slot[r]);
        fprintf(fp, "<div class=\"cmp-region\"><div class=\"lg\"><span class=\"sw\" "
                "style=\"background:%s\"></span><b>", c);
        put_html(fp, C->names[r]);
        fputs("</b></div>\n", fp);
        for (size_t k = 0; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, r, k);
            double wt = s && mx > 0 ? 100.0 * (double)s->total / (double)mx : 0;
            double ws = s && mx > 0 ? 100.0 * (double)s->self / (double)mx : 0;
            fprintf(fp, "<div class=\"bar-row\"><div class=\"bar-run\">#%zu</div>"
                    "<div class=\"bar-track\"><div class=\"bar-total\" style=\"width:%.2f%%;"
                    "background:%s\"></div><div class=\"bar-self\" style=\"width:%.2f%%;"
                    "background:%s\"></div></div><div class=\"bar-val\">", k + 1, wt, c, ws, c);
            if (s)
                fprintf(fp, "%s / self %s", fmt_ns(b1, sizeof b1, (double)s->total),
                        fmt_ns(b2, sizeof b2, (double)s->self));
            else
                fputs("not in this run", fp);
            fputs("</div></div>\n", fp);
        }
        fputs("</div>\n", fp);
    }
    fputs("</div>\n", fp);
}

/* Writes the comparison table: per region and run calls, total, self and
 * mean, then each later run's total time against run #1's (a ratio;
 * sortable by it). */
static void cmp_write_table(FILE *fp, const cmp_state_t *C, const uint32_t *ord) {
    fputs("<h2>Comparison</h2>\n<table id=\"cmp\" class=\"sortable\"><thead><tr><th>region</th>", fp);
    for (size_t k = 0; k < C->nruns; k++)
        fprintf(fp, "<th>calls #%zu</th><th>total #%zu</th><th>self #%zu</th><th>mean #%zu</th>",
                k + 1, k + 1, k + 1, k + 1);
    for (size_t k = 1; k < C->nruns; k++) fprintf(fp, "<th>total #%zu / #1</th>", k + 1);
    fputs("</tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        uint32_t r = ord[i];
        fputs("<tr><td data-v=\"", fp);
        put_html(fp, C->names[r]);
        fputs("\">", fp);
        put_html(fp, C->names[r]);
        fputs("</td>", fp);
        for (size_t k = 0; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, r, k);
            if (!s) {
                fputs("<td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-</td>"
                      "<td class=\"n\">-</td>", fp);
                continue;
            }
            fprintf(fp, "<td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", s->calls,
                    s->calls);
            cell_ns(fp, (double)s->total);
            cell_ns(fp, (double)s->self);
            cell_ns(fp, (double)s->total / (double)s->calls);
        }
        const rstat_t *base = cmp_stat(C, r, 0);
        for (size_t k = 1; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, r, k);
            if (!s || !base || base->total <= 0) {
                fputs(s ? "<td class=\"n\">new</td>" : "<td class=\"n\">gone</td>", fp);
                continue;
            }
            double q = (double)s->total / (double)base->total;
            fprintf(fp, "<td class=\"n%s\" data-v=\"%.6g\">%.3g&times; (%+.1f%%)</td>",
                    q > 1 ? " up" : q < 1 ? " down" : "", q, q, (q - 1) * 100);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

/* Writes the comparison's JSON blob: the runs (label, spans), the regions
 * in page order with their colours, and per region and run [calls, total,
 * self, min, max] (ns) or null. */
static void cmp_write_json(FILE *fp, const cmp_state_t *C, const uint32_t *ord,
                           const uint32_t *slot) {
    fputs("{\"runs\":[", fp);
    for (size_t k = 0; k < C->nruns; k++) {
        fprintf(fp, "%s{\"label\":", k ? "," : "");
        put_json_str(fp, C->labels[k]);
        fprintf(fp, ",\"nspans\":%" PRIu64 "}", C->runs[k].nspans);
    }
    fputs("],\"regions\":[", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, C->names[ord[i]]);
    }
    fputs("],\"colors\":[", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        char b[8];
        fprintf(fp, "%s\"%s\"", i ? "," : "", slot_color(b, slot[ord[i]]));
    }
    fputs("],\"stats\":[", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        fputs(i ? ",[" : "[", fp);
        for (size_t k = 0; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, ord[i], k);
            if (k) fputc(',', fp);
            if (!s) fputs("null", fp);
            else
                fprintf(fp, "[%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                        s->calls, s->total, s->self, s->min, s->max);
        }
        fputc(']', fp);
    }
    fputs("]}", fp);
}

/* Writes the whole comparison page.  Returns 0 or SPS_ENOMEM. */
static int cmp_write_page(FILE *fp, cmp_state_t *C) {
    uint32_t *ord = malloc((C->nregions ? C->nregions : 1) * sizeof *ord);
    uint32_t *slot = malloc((C->nregions ? C->nregions : 1) * sizeof *slot);
    if (!ord || !slot) {
        free(ord);
        free(slot);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < C->nregions; i++) ord[i] = (uint32_t)i;
    qsort_r(ord, C->nregions, sizeof *ord, by_max_total, C);
    for (size_t i = 0; i < C->nregions; i++) slot[ord[i]] = (uint32_t)i;
    fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
            "<title>spanscope: comparison of %zu runs</title>\n<style>\n%s"
            ".cmp-region{margin:8px 0 10px}\n</style>\n</head><body>\n"
            "<h1>spanscope: comparison of %zu runs</h1>\n<div class=\"meta\">%zu region%s "
            "over all runs; run #1 is the baseline of the ratio columns</div>\n",
            C->nruns, page_css, C->nruns, C->nregions, C->nregions == 1 ? "" : "s");
    cmp_write_runs(fp, C);
    fputs("<h2>Regions</h2>\n", fp);
    write_legend(fp, C->names, ord, C->nregions, slot);
    cmp_write_bars(fp, C, ord, slot);
    cmp_write_table(fp, C, ord);
    fputs("<script type=\"application/json\" id=\"spsdata\">", fp);
    cmp_write_json(fp, C, ord, slot);
    fprintf(fp, "</script>\n<script>\n%s</script>\n</body></html>\n", sort_js);
    free(ord);
    free(slot);
    return 0;
}

int sps__html_write_cmp(FILE *fp, sps__tlr_t *const *rs, const char *const *labels,
                        size_t nruns, const sps__html_opts_t *opt) {
    if (!fp || !rs || !labels || !opt || nruns < 2) return SPS_EINVAL;
    for (size_t k = 0; k < nruns; k++)
        if (!rs[k] || !labels[k]) return SPS_EINVAL;
    cmp_state_t C = {calloc(nruns, sizeof *C.runs), labels, nruns, NULL, NULL, 0};
    if (!C.runs) return SPS_ENOMEM;
    int rc = 0;
    for (size_t k = 0; k < nruns && rc == 0; k++) {
        C.runs[k].h = sps__tlr_header(rs[k]);
        C.runs[k].cap = 0; /* statistics only: the comparison has no timeline */
        C.runs[k].progress = opt->progress;
        rc = read_spans(rs[k], &C.runs[k]);
    }
    if (rc == 0) rc = cmp_match(&C);
    if (rc == 0) rc = cmp_write_page(fp, &C);
    if (rc == 0 && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    for (size_t k = 0; k < nruns; k++) state_free(&C.runs[k]);
    free(C.runs);
    free(C.names);
    free(C.ids);
    return rc;
}
