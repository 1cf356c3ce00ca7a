/* spanscope view: the page (tools/view_page/; docs/view.md "The page").
 *
 * Talks only to the server it came from (the API of docs/view.md, every
 * request with the X-Spanscope-Token header of ?token=), draws the
 * timeline of /api/tiles (one group per process, one track per thread,
 * one row per depth) as WebGL2 instanced rectangles -- one instanced draw
 * per frame -- with Canvas 2D labels on top (a Canvas 2D renderer when
 * WebGL2 is missing, or with ?renderer=2d), and the panels of the visible
 * window: the region table, call tree and flame graph of /api/window,
 * search, span details, counter tracks, the legend.  Zoom and pan with the
 * mouse, the keys or touch (Pointer Events: pinch, drag, tap).  Names reach the DOM
 * through textContent only.  Hooks for the tests: window.spsView. */
(function () {
'use strict';

var Q = new URLSearchParams(location.search);
var TOKEN = Q.get('token') || '';
var ROW = 16, GAP = 6, HDR = 18, LBL = 210, AX = 22, CH = 44;
var MAGIC = 0x54565053;

function $(id) { return document.getElementById(id); }
var rectsCv = $('rects'), ov = $('ov'), wrap = $('tlwrap'), space = $('tlspace'),
    tip = $('tip'), statusEl = $('status');
var octx = ov.getContext('2d');

/* --- formatting: the static page's (html.c fmt_ns) --------------------- */
/** A duration in ns as text, as `spanscope html` writes it ("1.23 ms"). */
function fmt(ns) {
    var a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + ' ns';
    if (a < 1e6) return (ns / 1e3).toFixed(2) + ' \u00b5s';
    if (a < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(3) + ' s';
}
/** A name shortened for the canvas and tooltips (names may be 1 MiB). */
function short(s, n) { s = String(s); n = n || 200; return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; }

/* --- the server ---------------------------------------------------------- */
var stopped = false;
function setStatus(text, err) {
    statusEl.textContent = text;
    statusEl.className = 'meta' + (err ? ' err' : '');
}
/** fetch with the token; resolves to the Response (rejects on HTTP errors
 *  but 404, which some endpoints answer with a JSON error). */
function api(path, opts) {
    opts = opts || {};
    opts.headers = { 'X-Spanscope-Token': TOKEN };
    opts.cache = 'no-store';
    return fetch(path, opts).then(function (r) {
        if (!r.ok && r.status !== 404) {
            return r.text().then(function (t) {
                var msg = t;
                try { msg = JSON.parse(t).error || t; } catch (e) { /* not JSON */ }
                throw new Error(path.split('?')[0] + ': HTTP ' + r.status + ' ' + short(msg, 120));
            });
        }
        return r;
    });
}
function apiJson(path) { return api(path).then(function (r) { return r.json().then(function (j) { j._status = r.status; return j; }); }); }
function failed(e) { if (!stopped) setStatus(String(e && e.message || e), true); }

/* --- the recording's layout ---------------------------------------------- */
var M = null;              /* /api/meta */
var colRGB = [];           /* per name: [r,g,b] 0..255 */
var lanes = [];            /* per thread lane: {t, proc, name, depths, y, h, hdr} */
var laneOf = {};           /* thread id -> lane */
var clanes = [];           /* counter lanes: {id, name, proc, y, h} */
var contentH = AX;
var T1 = 1, v0 = 0, v1 = 1;

function parseColor(c) {
    var m = /^#([0-9a-f]{6})$/i.exec(c || '');
    var v = m ? parseInt(m[1], 16) : 0x999999;
    return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}
/** A process's label: its name, and its rank when it has one. */
function procName(id) {
    for (var i = 0; i < M.procs.length; i++) {
        var p = M.procs[i];
        if (p.id !== id) continue;
        var rank = typeof p.rank === 'number' && p.rank >= 0 ? 'rank ' + p.rank : '';
        return p.name ? p.name + (rank ? ' (' + rank + ')' : '') : (rank || 'process ' + id);
    }
    return 'process ' + id;
}
function layout() {
    lanes = []; laneOf = {}; clanes = [];
    M.threads.forEach(function (t) {
        var L = { t: t.id, proc: t.proc, name: t.name, depths: Math.max(1, t.depths | 0), stream: !!t.stream };
        lanes.push(L); laneOf[t.id] = L;
    });
    var procOrder = {};
    M.procs.forEach(function (p, i) { procOrder[p.id] = i; });
    lanes.sort(function (a, b) { return (procOrder[a.proc] - procOrder[b.proc]) || (a.t - b.t); });
    var y = AX, last = null;
    lanes.forEach(function (L) {
        if (L.proc !== last) { L.hdr = y; y += HDR; last = L.proc; }
        L.y = y; L.h = L.depths * ROW; y += L.h + GAP;
    });
    (M.counters || []).forEach(function (c) {
        clanes.push({ id: c.id, name: c.name, proc: c.proc, hy: y, y: y + HDR, h: CH });
        y += HDR + CH + GAP;
    });
    contentH = y;
}

/* --- the view ------------------------------------------------------------ */
var W = 0, H = 0, dpr = 1;
function plotW() { return Math.max(1, W - LBL); }
function xOf(t) { return LBL + (t - v0) / (v1 - v0) * plotW(); }
function tOf(x) { return v0 + (x - LBL) / plotW() * (v1 - v0); }
function scrollY() { return wrap.scrollTop; }
function clampView() {
    var w = v1 - v0, minW = 10, maxW = T1 * 1.5;
    if (!(w >= minW)) { var c = (v0 + v1) / 2; v0 = c - minW / 2; v1 = c + minW / 2; w = minW; }
    if (w > maxW) { var c2 = (v0 + v1) / 2; v0 = c2 - maxW / 2; v1 = c2 + maxW / 2; w = maxW; }
    var lo = -0.25 * T1, hi = 1.25 * T1;
    if (v0 < lo) { v0 = lo; v1 = lo + w; }
    if (v1 > hi) { v1 = hi; v0 = hi - w; }
}
/** Sets the visible window to [a, b) ns (relative) and asks for its data. */
function setView(a, b) {
    if (!(b > a)) return;
    v0 = a; v1 = b; clampView();
    $('win').textContent = 'window ' + fmt(v0) + ' \u2013 ' + fmt(v1) + ' (' + fmt(v1 - v0) + ')';
    redraw();
    schedule();
}
function zoomAround(t, f) {
    var w = (v1 - v0) * f;
    setView(t - (t - v0) * f, t - (t - v0) * f + w);
}
function pan(frac) { var d = (v1 - v0) * frac; setView(v0 + d, v1 + d); }

/* --- data: tiles, window, counters (debounced; the last answer wins) ------ */
var tiles = null;          /* {t0, t1, lanes: [{thread, depth, level, n, rec: DataView, off}]} */
var counters = null;       /* /api/counters */
var seq = { tiles: 0, win: 0, cnt: 0 };
var inflight = 0, timer = null, winTimer = null, frames = 0;

/** Parses a /api/tiles answer (the binary format of docs/view.md). */
function parseTiles(buf) {
    var dv = new DataView(buf), n = buf.byteLength;
    if (n < 8 || dv.getUint32(0, true) !== MAGIC) throw new Error('tiles: not a tile answer');
    var nl = dv.getUint32(4, true), off = 8, out = [];
    for (var i = 0; i < nl; i++) {
        if (off + 16 > n) throw new Error('tiles: truncated lane header');
        var L = { thread: dv.getUint32(off, true), depth: dv.getUint32(off + 4, true),
                  n: dv.getUint32(off + 8, true), level: dv.getUint32(off + 12, true), off: off + 16 };
        off += 16;
        if (L.n > (n - off) / 24) throw new Error('tiles: truncated records');
        off += L.n * 24;
        out.push(L);
    }
    if (off !== n) throw new Error('tiles: ' + (n - off) + ' bytes after the last lane');
    return { dv: dv, lanes: out };
}
/** The threads whose lanes show in the scrolled timeline, or null for all. */
function visibleThreads() {
    var top = scrollY(), bot = top + H, ids = [];
    lanes.forEach(function (L) { if (L.y + L.h >= top && L.y <= bot) ids.push(L.t); });
    return ids.length === lanes.length ? null : ids;
}
function schedule() {
    if (!M || stopped) return;
    clearTimeout(timer);
    timer = setTimeout(fetchTiles, 40);
    clearTimeout(winTimer);
    winTimer = setTimeout(fetchWindow, 150);
}
function fetchTiles() {
    timer = null;
    if (stopped) return;
    var my = ++seq.tiles, a = v0, b = v1;
    /* the part of the window inside the recording, with its share of the pixels */
    var qa = Math.max(0, Math.floor(a)), qb = Math.min(Math.ceil(b), Math.ceil(T1) + 1);
    var px = Math.max(1, Math.round(plotW() * Math.min(1, (qb - qa) / (b - a))));
    var th = visibleThreads();
    if ((th && !th.length) || qb <= qa) { tiles = { t0: a, t1: b, dv: null, lanes: [] }; frames++; redraw(); return; }
    var q = 't0=' + qa + '&t1=' + qb + '&px=' + px + (th ? '&threads=' + th.join(',') : '');
    inflight++;
    var slow = setTimeout(function () { if (my === seq.tiles && !stopped) setStatus('waiting for the server\u2026'); }, 400);
    api('/api/tiles?' + q).then(function (r) {
        if (!r.ok) throw new Error('/api/tiles: HTTP ' + r.status);
        return r.arrayBuffer();
    }).then(function (buf) {
        if (my !== seq.tiles) return;          /* a newer request is out: it wins */
        var t = parseTiles(buf);
        t.t0 = a; t.t1 = b;
        tiles = t; frames++;
        if (!stopped) setStatus('');
        showDetail(t);
        redraw();
    }).catch(failed).then(function () { inflight--; clearTimeout(slow); });
    if (M.counters && M.counters.length) {
        var myc = ++seq.cnt;
        inflight++;
        apiJson('/api/counters?t0=' + qa + '&t1=' + qb + '&px=' + px).then(function (j) {
            if (myc !== seq.cnt) return;
            counters = j; redraw();
        }).catch(failed).then(function () { inflight--; });
    }
}
/* The level of detail of the last answer, in the window's line. */
function showDetail(t) {
    var lv = 0;
    t.lanes.forEach(function (L) { if (L.level > lv) lv = L.level; });
    var b = null;
    (M.levels || []).forEach(function (l) { if (l.level === lv) b = l.bucket_ns; });
    view.level = lv;
    $('win').textContent = 'window ' + fmt(v0) + ' \u2013 ' + fmt(v1) + ' (' + fmt(v1 - v0) + '); ' +
        (lv === 0 ? 'every span drawn' : 'spans narrower than ' + (b ? fmt(b) : 'a pixel') + ' merged');
}
function fetchWindow() {
    winTimer = null;
    if (stopped) return;
    var my = ++seq.win, a = Math.max(0, Math.floor(v0)), b = Math.max(a + 1, Math.ceil(v1));
    var full = a <= 0 && b >= T1;
    if (!full) askLegend();
    inflight++;
    apiJson('/api/window?t0=' + a + '&t1=' + b).then(function (j) {
        if (full && !legendDone) buildLegend(j.table);   /* even when a newer request is out */
        if (my !== seq.win) return;
        showWindow(j);
    }).catch(failed).then(function () { inflight--; });
}
/* The legend needs the whole recording's table: asked for by itself when the
 * first window asked for is not the whole recording. */
var legendAsked = false;
function askLegend() {
    if (legendDone || legendAsked) return;
    legendAsked = true;
    inflight++;
    apiJson('/api/window?t0=0&t1=' + Math.ceil(T1)).then(function (j) {
        if (!legendDone) buildLegend(j.table);
    }).catch(failed).then(function () { inflight--; });
}

/* --- drawing ------------------------------------------------------------- */
var renderer = null;       /* {name, draw(inst, n)} */
var inst = new Float32Array(8 * 1024);   /* per rectangle: x, y, w, h, r, g, b, merged */
var instOff = new Int32Array(1024);      /* per rectangle: its record's byte offset in the tiles */
var frameLanes = [];       /* per lane drawn: {thread, depth, level, first, n} rectangles first.. */
var frameN = 0, frameTiles = null;
var drawnSpans = 0;
var highlight = null;      /* {thread, depth, start, dur} */
var needDraw = false;

function instRoom(n) {
    if (inst.length >= n * 8) return;
    var m = inst.length;
    while (m < n * 8) m *= 2;
    var a = new Float32Array(m); a.set(inst); inst = a;
    var b = new Int32Array(m / 8); b.set(instOff); instOff = b;
}
function makeWebGL2(cv) {
    var gl = null;
    try { gl = cv.getContext('webgl2', { antialias: false, alpha: false, depth: false, preserveDrawingBuffer: true }); }
    catch (e) { gl = null; }
    if (!gl) return null;
    var vs = '#version 300 es\n' +
        'layout(location=0) in vec4 rect; layout(location=1) in vec4 col;\n' +
        'uniform vec2 res; uniform vec4 clip; flat out vec4 vcol;\n' +
        'void main(){ int i = gl_VertexID; vec2 q = vec2((i == 1 || i == 2 || i == 4) ? 1.0 : 0.0,' +
        ' (i == 2 || i == 4 || i == 5) ? 1.0 : 0.0);\n' +
        ' vec2 p = rect.xy + q * rect.zw; vcol = col;\n' +
        ' gl_Position = vec4(p.x / res.x * 2.0 - 1.0, 1.0 - p.y / res.y * 2.0, 0.0, 1.0); }\n';
    var fs = '#version 300 es\nprecision mediump float; flat in vec4 vcol; out vec4 o;\n' +
        'void main(){ vec3 c = vcol.rgb;\n' +
        ' if (vcol.a > 0.5) { float s = mod(floor((gl_FragCoord.x + gl_FragCoord.y) / 3.0), 2.0);\n' +
        '  c = mix(c, vec3(1.0), s > 0.5 ? 0.55 : 0.25); }\n' +
        ' o = vec4(c, 1.0); }\n';
    function sh(type, src) {
        var s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s);
        if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('WebGL2 shader: ' + gl.getShaderInfoLog(s));
        return s;
    }
    var prog;
    try {
        prog = gl.createProgram();
        gl.attachShader(prog, sh(gl.VERTEX_SHADER, vs));
        gl.attachShader(prog, sh(gl.FRAGMENT_SHADER, fs));
        gl.linkProgram(prog);
        if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error('WebGL2 link: ' + gl.getProgramInfoLog(prog));
    } catch (e) { return null; }
    var uRes = gl.getUniformLocation(prog, 'res');
    var vao = gl.createVertexArray(), buf = gl.createBuffer();
    gl.bindVertexArray(vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, buf);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 4, gl.FLOAT, false, 32, 0);
    gl.vertexAttribDivisor(0, 1);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 4, gl.FLOAT, false, 32, 16);
    gl.vertexAttribDivisor(1, 1);
    gl.bindVertexArray(null);
    var lost = false;
    cv.addEventListener('webglcontextlost', function (e) { e.preventDefault(); lost = true; fallback2d(); });
    return {
        name: 'webgl2',
        draw: function (a, n) {
            if (lost) return;
            gl.viewport(0, 0, cv.width, cv.height);
            gl.disable(gl.SCISSOR_TEST);
            gl.clearColor(1, 1, 1, 1);
            gl.clear(gl.COLOR_BUFFER_BIT);
            gl.enable(gl.SCISSOR_TEST);   /* the plot area only: not the labels' column, nor the axis */
            gl.scissor(Math.round(LBL * dpr), 0, Math.max(0, cv.width - Math.round(LBL * dpr)),
                       Math.max(0, cv.height - Math.round(AX * dpr)));
            gl.useProgram(prog);
            gl.uniform2f(uRes, W, H);
            gl.bindVertexArray(vao);
            gl.bindBuffer(gl.ARRAY_BUFFER, buf);
            gl.bufferData(gl.ARRAY_BUFFER, a.subarray(0, n * 8), gl.DYNAMIC_DRAW);
            if (n) gl.drawArraysInstanced(gl.TRIANGLES, 0, 6, n);   /* the frame's one draw */
            gl.bindVertexArray(null);
        }
    };
}
var hatch = null;
function make2D(cv) {
    var ctx = cv.getContext('2d', { alpha: false });
    if (!ctx) return null;
    return {
        name: '2d',
        draw: function (a, n) {
            ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
            ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
            ctx.save(); ctx.beginPath(); ctx.rect(LBL, AX, W - LBL, H - AX); ctx.clip();
            if (!hatch) {
                var p = document.createElement('canvas'); p.width = p.height = 6;
                var pc = p.getContext('2d'); pc.fillStyle = 'rgba(255,255,255,0.45)';
                for (var k = 0; k < 6; k++) { pc.fillRect(k, 5 - k, 1, 1); pc.fillRect((k + 3) % 6, 5 - k, 1, 1); pc.fillRect((k + 1) % 6, 5 - k, 1, 1); }
                hatch = ctx.createPattern(p, 'repeat');
            }
            /* one path per colour (and merged or not): few state changes */
            var groups = new Map();
            for (var i = 0; i < n; i++) {
                var o = i * 8;
                var key = (Math.round(a[o + 4] * 255) << 17) + (Math.round(a[o + 5] * 255) << 9) +
                          (Math.round(a[o + 6] * 255) << 1) + (a[o + 7] > 0.5 ? 1 : 0);
                var gr = groups.get(key);
                if (!gr) { gr = []; groups.set(key, gr); }
                gr.push(o);
            }
            groups.forEach(function (list, key) {
                var m = key & 1, r = (key >> 17) & 255, g = (key >> 9) & 255, b = (key >> 1) & 255;
                if (m) { r += (255 - r) * 0.25; g += (255 - g) * 0.25; b += (255 - b) * 0.25; }
                ctx.beginPath();
                for (var j = 0; j < list.length; j++) { var o = list[j]; ctx.rect(a[o], a[o + 1], a[o + 2], a[o + 3]); }
                ctx.fillStyle = 'rgb(' + Math.round(r) + ',' + Math.round(g) + ',' + Math.round(b) + ')';
                ctx.fill();
                if (m) { ctx.fillStyle = hatch; ctx.fill(); }
            });
            ctx.restore();
        }
    };
}
function fallback2d() {
    /* a lost WebGL2 context: a fresh canvas for the 2D renderer */
    var c = document.createElement('canvas');
    c.id = 'rects';
    rectsCv.parentNode.replaceChild(c, rectsCv);
    rectsCv = c;
    renderer = make2D(rectsCv);
    resize();
}

function resize() {
    dpr = window.devicePixelRatio || 1;
    W = wrap.clientWidth;
    H = wrap.clientHeight;
    [rectsCv, ov].forEach(function (c) {
        c.style.width = W + 'px'; c.style.height = H + 'px';
        c.width = Math.max(1, Math.round(W * dpr)); c.height = Math.max(1, Math.round(H * dpr));
    });
    space.style.height = Math.max(0, contentH - H) + 'px';
    redraw();
}
function redraw() {
    if (needDraw) return;
    needDraw = true;
    requestAnimationFrame(function () { needDraw = false; draw(); });
}

/* The rectangles of the current view from the tiles: into inst (and
 * instOff, frameLanes: what recAt and the hooks read), labels; returns
 * their number.  Within a lane they come in start order. */
function buildFrame(labels) {
    var n = 0, sy = scrollY(), pw = plotW(), k = pw / (v1 - v0);
    frameLanes = []; drawnSpans = 0; frameN = 0; frameTiles = tiles;
    if (!tiles || !tiles.dv) return 0;
    var dv = tiles.dv;
    for (var li = 0; li < tiles.lanes.length; li++) {
        var TL = tiles.lanes[li], L = laneOf[TL.thread];
        if (!L || TL.depth >= L.depths) continue;
        var y = L.y + TL.depth * ROW - sy;
        if (y + ROW < AX || y > H) continue;
        var FL = { thread: TL.thread, depth: TL.depth, level: TL.level, first: n, n: 0, y: y + 1 };
        frameLanes.push(FL);
        for (var j = 0, off = TL.off; j < TL.n; j++, off += 24) {
            var s = dv.getFloat64(off, true), d = dv.getFloat64(off + 8, true);
            if (s > v1 || s + d < v0) continue;
            var name = dv.getUint32(off + 16, true), cnt = dv.getUint32(off + 20, true);
            var x0 = LBL + (s - v0) * k, x1 = LBL + (s + d - v0) * k;
            if (x0 < LBL - 2) x0 = LBL - 2;
            if (x1 > W + 2) x1 = W + 2;
            var w = Math.max(1, x1 - x0);
            instRoom(n + 1);
            var o = n * 8, c = colRGB[name] || [153, 153, 153];
            inst[o] = x0; inst[o + 1] = y + 1; inst[o + 2] = w; inst[o + 3] = ROW - 2;
            inst[o + 4] = c[0] / 255; inst[o + 5] = c[1] / 255; inst[o + 6] = c[2] / 255;
            inst[o + 7] = cnt > 1 ? 1 : 0;
            instOff[n] = off;
            n++; FL.n++; drawnSpans += cnt;
            if (w > 30) labels.push([x0, y, w, name, cnt]);
        }
    }
    frameN = n;
    return n;
}
/** Rectangle i of the last frame of lane FL as a record object. */
function frameRec(FL, i) {
    var dv = frameTiles.dv, off = instOff[i], o = i * 8;
    return { thread: FL.thread, depth: FL.depth, level: FL.level,
             start: dv.getFloat64(off, true), dur: dv.getFloat64(off + 8, true),
             name: dv.getUint32(off + 16, true), count: dv.getUint32(off + 20, true),
             x0: inst[o], x1: inst[o] + inst[o + 2], y: FL.y };
}
var textW = new Map();
function fitText(ctx, s, w) {
    s = short(s, 160);
    var key = s, tw = textW.get(key);
    if (tw === undefined) { tw = ctx.measureText(s).width; if (textW.size > 5000) textW.clear(); textW.set(key, tw); }
    if (tw <= w) return s;
    var lo = 0, hi = s.length;        /* the longest prefix + ellipsis that fits */
    while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (ctx.measureText(s.slice(0, mid) + '\u2026').width <= w) lo = mid; else hi = mid - 1;
    }
    return lo ? s.slice(0, lo) + '\u2026' : '';
}
function draw() {
    if (!M || !renderer) return;
    var began = performance.now();
    var labels = [];
    var n = buildFrame(labels);
    renderer.draw(inst, n);
    var c = octx, sy = scrollY();
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, W, H);
    c.font = '11px sans-serif'; c.textBaseline = 'middle';
    c.save(); c.beginPath(); c.rect(LBL, AX, W - LBL, H - AX); c.clip();
    labels.forEach(function (lb) {
        var x0 = Math.max(lb[0], LBL), w = lb[0] + lb[2] - x0;
        var s = (lb[4] > 1 ? lb[4] + '\u00d7 ' : '') + (M.names[lb[3]] || '');
        var t = fitText(c, s, w - 6);
        if (t) { c.fillStyle = '#111'; c.fillText(t, x0 + 3, lb[1] + ROW / 2); }
    });
    drawCounters(c, sy);
    if (highlight) {
        var L = laneOf[highlight.thread];
        if (L) {
            var hx0 = Math.max(LBL - 2, xOf(highlight.start)), hx1 = Math.min(W + 2, xOf(highlight.start + highlight.dur));
            var hy = L.y + highlight.depth * ROW - sy;
            c.strokeStyle = '#000'; c.lineWidth = 2;
            c.strokeRect(hx0 - 1, hy, Math.max(1, hx1 - hx0) + 2, ROW);
            c.lineWidth = 1;
        }
    }
    drawArrows(c);
    c.restore();
    drawLabels(c, sy);
    drawAxis(c);
    if (!M.nspans) { c.fillStyle = '#555'; c.font = '13px sans-serif'; c.fillText('this recording has no spans', LBL + 8, AX + 20); }
    if (tiles && !document.body.dataset.ready) { document.body.dataset.ready = '1'; view.ready = true; }
    view.drawn = n;
    view.drawnSpans = drawnSpans;
    view.drawMs = performance.now() - began;
    view.frames = frames;
}
/* --- flows: launching span -> device activity (the selection's only) ---- */
var arrows = [];           /* [{from: {thread, depth, t}, to: {thread, depth, t}}] */
var hoverArrows = [];      /* the hovered record's, while the pointer is on it */
var hoverKey = null, hoverTimer = null, hoverSeq = 0;
/** A record's key: its lane and start. */
function recKey(thread, depth, start) { return thread + ':' + depth + ':' + start; }
/** The flows of a /api/span answer: a device activity's from its launch in
 *  its launching span, a span's to each activity it launched. */
function flowsOf(j) {
    var out = [];
    if (j.launch)
        out.push({ from: { thread: j.launch.thread, depth: j.launch.depth, t: j.launch.launch_ns },
                   to: { thread: j.thread, depth: j.depth, t: j.start_ns } });
    (j.launched || []).forEach(function (a) {
        out.push({ from: { thread: j.thread, depth: j.depth, t: a.launch_ns },
                   to: { thread: a.thread, depth: a.depth, t: a.start_ns } });
    });
    return out;
}
/** The pointer is on record R (null: on none): after a short rest there,
 *  its flows are drawn (as for the selection) and the tooltip says where
 *  it was launched from or what it launched. */
function hoverOn(R) {
    var key = R && R.count === 1 && M.ndevice ? recKey(R.thread, R.depth, R.start) : null;
    if (key === hoverKey) return;
    hoverKey = key;
    clearTimeout(hoverTimer); hoverTimer = null;
    if (hoverArrows.length) { hoverArrows = []; redraw(); }
    view.hoverArrows = 0;
    if (!key) return;
    hoverTimer = setTimeout(function () {
        hoverTimer = null;
        var my = ++hoverSeq;
        inflight++;
        apiJson('/api/span?thread=' + R.thread + '&depth=' + R.depth + '&t=' + Math.floor(R.start + R.dur / 2)).then(function (j) {
            if (my !== hoverSeq || hoverKey !== key || j._status !== 200) return;
            hoverArrows = flowsOf(j);
            view.hoverArrows = hoverArrows.length;
            var more = j.launch ? 'launched by ' + short(M.names[j.launch.name] || '', 120) + ' @ ' + fmt(j.launch.start_ns)
                : j.device ? 'launched outside the spans of its region'
                : j.launched ? 'launched ' + j.launched_total + ' device activit' + (j.launched_total === 1 ? 'y' : 'ies') : '';
            if (more && tip.style.display === 'block') tip.textContent += '\n' + more;
            redraw();
        }).catch(failed).then(function () { inflight--; });
    }, 150);
}
/** An arrow end's canvas point: its time on the middle of its row, or null
 *  (its thread has no lane). */
function arrowEnd(e) {
    var L = laneOf[e.thread];
    return L ? { x: xOf(e.t), y: L.y + e.depth * ROW + ROW / 2 - scrollY() } : null;
}
/** Draws the flows of the selection and of the hovered record (never all of
 *  them: Perfetto's way), each a curve from the launch (in the launching
 *  span) to the start of the device activity, with a head. */
function drawArrows(c) {
    var n = 0;
    c.strokeStyle = '#d0104c'; c.fillStyle = '#d0104c'; c.lineWidth = 1.5;
    var sel = highlight ? recKey(highlight.thread, highlight.depth, highlight.start) : null;
    arrows.concat(hoverKey !== sel ? hoverArrows : []).forEach(function (A) {
        var a = arrowEnd(A.from), b = arrowEnd(A.to);
        if (!a || !b) return;
        var dx = Math.max(20, Math.abs(b.x - a.x) / 2);
        c.beginPath(); c.moveTo(a.x, a.y);
        c.bezierCurveTo(a.x + dx, a.y, b.x - dx, b.y, b.x, b.y); c.stroke();
        c.beginPath(); c.moveTo(b.x, b.y); c.lineTo(b.x - 7, b.y - 4); c.lineTo(b.x - 7, b.y + 4);
        c.closePath(); c.fill();
        c.beginPath(); c.arc(a.x, a.y, 2.5, 0, 2 * Math.PI); c.fill();
        n++;
    });
    c.lineWidth = 1;
    view.arrowsDrawn = n;
}
function drawCounters(c, sy) {
    if (!counters || !counters.series) return;
    var byId = {};
    counters.series.forEach(function (s) { byId[s.id] = s; });
    var nc = 0;
    clanes.forEach(function (C) {
        var S = byId[C.id], y = C.y - sy;
        if (!S || !S.points || !S.points.length || y + C.h < AX || y > H) return;
        var mn = Infinity, mx = -Infinity;
        S.points.forEach(function (p) { if (p[1] < mn) mn = p[1]; if (p[2] > mx) mx = p[2]; });
        var span = mx - mn || 1, yOf = function (v) { return y + C.h - 2 - (v - mn) / span * (C.h - 4); };
        c.fillStyle = 'rgba(60,120,200,0.18)';
        S.points.forEach(function (p, i) {      /* min..max of each pixel column */
            var xa = xOf(p[0]), xb = i + 1 < S.points.length ? xOf(S.points[i + 1][0]) : W + 2;
            c.fillRect(xa, yOf(p[2]), Math.max(1, xb - xa), Math.max(1, yOf(p[1]) - yOf(p[2])));
        });
        c.strokeStyle = '#3c6fb4'; c.beginPath();
        var py = yOf(S.points[0][3]); c.moveTo(xOf(S.points[0][0]), py);
        for (var i = 1; i < S.points.length; i++) { var x = xOf(S.points[i][0]); c.lineTo(x, py); py = yOf(S.points[i][3]); c.lineTo(x, py); }
        c.lineTo(W + 2, py); c.stroke();
        C.mn = mn; C.mx = mx; nc++;
    });
    view.counters = nc;
}
function drawLabels(c, sy) {
    c.fillStyle = '#fff'; c.fillRect(0, AX, LBL, H - AX);
    lanes.forEach(function (L) {
        if (L.hdr !== undefined && L.hdr - sy + HDR >= AX && L.hdr - sy <= H) {
            c.fillStyle = '#e8e8f0'; c.fillRect(0, L.hdr - sy, W, HDR - 2);
            c.fillStyle = '#222'; c.font = 'bold 12px sans-serif';
            c.fillText(short(procName(L.proc), 120), 4, L.hdr - sy + HDR / 2);
        }
        var y = L.y - sy;
        if (y + L.h < AX || y > H) return;
        c.font = '11px sans-serif'; c.fillStyle = '#333';
        c.fillText(fitText(c, L.name || ('thread ' + L.t), 120), 8, y + ROW / 2);
        c.fillStyle = '#888'; c.textAlign = 'right';
        for (var d = 0; d < L.depths; d++) c.fillText('depth ' + d, LBL - 6, y + d * ROW + ROW / 2);
        c.textAlign = 'left';
        c.strokeStyle = '#eee'; c.beginPath(); c.moveTo(0, y + L.h + GAP / 2); c.lineTo(W, y + L.h + GAP / 2); c.stroke();
    });
    clanes.forEach(function (C) {
        var hy = C.hy - sy;
        if (hy + HDR + C.h < AX || hy > H) return;
        c.fillStyle = '#eef3ea'; c.fillRect(0, hy, W, HDR - 2);
        c.fillStyle = '#222'; c.font = 'bold 12px sans-serif';
        c.fillText('counter: ' + short(C.name, 80) + ' (' + short(procName(C.proc), 60) + ')', 4, hy + HDR / 2);
        c.font = '11px sans-serif'; c.fillStyle = '#333';
        if (C.mx !== undefined) {
            c.fillText('max ' + C.mx.toPrecision(4), 8, C.y - sy + 8);
            c.fillText('min ' + C.mn.toPrecision(4), 8, C.y - sy + C.h - 8);
        }
    });
}
/** A tick's time: in the unit of its size, with the decimals its step
 *  needs (1.00000001 s for ticks 10 ns apart a second in). */
function fmtTick(t, step) {
    var units = [[1, 'ns'], [1e3, '\u00b5s'], [1e6, 'ms'], [1e9, 's']], u = units[0];
    var a = Math.max(Math.abs(t), step);
    units.forEach(function (x) { if (a >= x[0]) u = x; });
    var dec = Math.min(9, Math.max(0, Math.ceil(Math.log10(u[0] / step) - 1e-9)));
    return (t / u[0]).toFixed(dec) + ' ' + u[1];
}
function drawAxis(c) {
    c.fillStyle = '#f6f6f6'; c.fillRect(0, 0, W, AX);
    c.strokeStyle = '#bbb'; c.fillStyle = '#444'; c.font = '11px sans-serif';
    /* ticks at 1, 2 or 5 x 10^k ns, about 110 px apart at least (their labels fit) */
    var span = v1 - v0, most = Math.max(2, Math.floor(plotW() / 110));
    var step = Math.pow(10, Math.floor(Math.log10(span / most)));
    if (span / step > most * 2.5) step *= 5; else if (span / step > most) step *= 2;
    step = Math.max(1, step);
    var ticks = 0;
    for (var t = Math.ceil(v0 / step) * step; t <= v1 && ticks < 100; t += step, ticks++) {
        var x = xOf(t);
        if (x < LBL) continue;
        c.beginPath(); c.moveTo(x, AX - 6); c.lineTo(x, AX); c.stroke();
        c.fillText(fmtTick(t, step), x + 2, AX / 2 - 1);
    }
    c.fillText(fmt(span) + ' shown', 6, AX / 2 - 1);
    c.beginPath(); c.moveTo(0, AX - 0.5); c.lineTo(W, AX - 0.5); c.stroke();
}

/* --- interaction: wheel, drag, keys, click ------------------------------- */
function local(e) { var r = ov.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; }
/** The (lane, depth) row at canvas y, or null. */
function rowAt(y) {
    var cy = y + scrollY();
    for (var i = 0; i < lanes.length; i++) {
        var L = lanes[i];
        if (cy >= L.y && cy < L.y + L.h) return { L: L, depth: Math.floor((cy - L.y) / ROW) };
    }
    return null;
}
/** The record of the last frame under canvas point (x, y), or null: the
 *  one that holds x, else the nearest within 2 px (a pointer is never that exact). */
function recAt(x, y) {
    var r = rowAt(y), FL = null;
    if (!r) return null;
    for (var i = 0; i < frameLanes.length; i++)
        if (frameLanes[i].thread === r.L.t && frameLanes[i].depth === r.depth) { FL = frameLanes[i]; break; }
    if (!FL || !FL.n) return null;
    /* the last rectangle starting at or before x (their x0 ascend), and its neighbours */
    var lo = FL.first, hi = FL.first + FL.n - 1;
    while (lo < hi) { var m = (lo + hi + 1) >> 1; if (inst[m * 8] <= x) lo = m; else hi = m - 1; }
    var best = -1, bd = 2;
    for (var j = Math.max(FL.first, lo - 2); j <= Math.min(FL.first + FL.n - 1, lo + 1); j++) {
        var x0 = inst[j * 8], x1 = x0 + inst[j * 8 + 2];
        var d = x < x0 ? x0 - x : x > x1 ? x - x1 : 0;
        if (d < bd || (d === 0 && bd === 0 && j > best)) { best = j; bd = d; }
    }
    return best < 0 ? null : frameRec(FL, best);
}
/* the wheel zooms around the pointer; a sideways wheel (or shift + wheel)
 * pans; the scrollbar and the up/down keys scroll the lanes */
ov.addEventListener('wheel', function (e) {
    e.preventDefault();
    var k = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? H : 1;
    var dx = (e.deltaX || 0) * k, dy = (e.deltaY || 0) * k;
    if (e.shiftKey && !dx) { dx = dy; dy = 0; }
    if (Math.abs(dx) > Math.abs(dy)) { pan(dx / plotW()); return; }
    var p = local(e);
    zoomAround(tOf(Math.max(LBL, p.x)), Math.exp(dy * 0.0015));
}, { passive: false });
var drag = null;
ov.addEventListener('mousedown', function (e) {
    if (e.button !== 0 || touches.size || performance.now() < touchUntil) return;   /* made up after a touch */
    var p = local(e);
    drag = { x: e.clientX, y: e.clientY, v0: v0, v1: v1, moved: false, px: p.x, py: p.y };
    ov.classList.add('dragging');
    wrap.focus({ preventScroll: true });
});
window.addEventListener('mousemove', function (e) {
    if (drag) {
        if (Math.abs(e.clientX - drag.x) > 3 || Math.abs(e.clientY - drag.y) > 3) drag.moved = true;
        if (drag.moved) {
            var dt = (e.clientX - drag.x) / plotW() * (drag.v1 - drag.v0);
            setView(drag.v0 - dt, drag.v1 - dt);
            tip.style.display = 'none';
        }
        return;
    }
    if (e.target !== ov || touches.size || performance.now() < touchUntil) { tip.style.display = 'none'; if (M) hoverOn(null); return; }
    var p = local(e), R = p.x >= LBL ? recAt(p.x, p.y) : null;
    hoverOn(R);
    if (!R) { tip.style.display = 'none'; return; }
    var L = laneOf[R.thread];
    tip.textContent = short(M.names[R.name] || '', 300) +
        (R.count > 1 ? '\n' + R.count + (L.stream ? ' activities' : ' spans') + ' merged (zoom in)' : '') +
        '\nstart: ' + fmt(R.start) + '\nduration: ' + fmt(R.dur) +
        '\n' + short(procName(L.proc), 80) + ' / ' + short(L.name || ('thread ' + L.t), 80);
    tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px';
    tip.style.display = 'block';
});
window.addEventListener('mouseup', function (e) {
    if (!drag) return;
    var d = drag; drag = null;
    ov.classList.remove('dragging');
    if (!d.moved && d.px >= LBL && d.py >= AX) clickAt(d.px, d.py);
});

/* --- touch and pen: Pointer Events ---------------------------------------
 * The mouse keeps its own handlers above (pointerType 'mouse' is left to
 * them).  A touch screen or pen: one finger dragged pans the time axis and
 * scrolls the lanes, as the finger moves; two fingers pinch-zoom the time
 * axis around their centre (the time under the centre at the start stays
 * under the centre, the window's width scales by the fingers' distance at
 * the start over their distance now); a tap (a finger down and up within
 * TAP_PX, never joined by a second one) is a click.  #ov has touch-action:
 * none (view.css): the browser neither scrolls nor zooms the page for
 * touches on the timeline, and cancelling pointerdown stops the mouse
 * events browsers make up after a tap from reaching the handlers above. */
var TAP_PX = 8;
var touches = new Map();    /* pointerId -> {x, y}: client coordinates now */
var gesture = null;         /* {n: 1|2, ...the state at its start} */
var touchUntil = 0;         /* mouse events before this time follow a touch: ignored */
function touchPoints() {
    var pts = [];
    touches.forEach(function (p) { pts.push(p); });
    return pts.slice(0, 2);
}
/* a fresh gesture from the fingers down now and the view now (so a finger
 * added or lifted never makes the window jump) */
function startGesture(tapOk) {
    var pts = touchPoints(), r = ov.getBoundingClientRect();
    if (!pts.length) { gesture = null; return; }
    var g = { n: pts.length, v0: v0, v1: v1, sy: wrap.scrollTop, tap: tapOk && pts.length === 1 };
    if (g.n === 1) {
        g.x = pts[0].x; g.y = pts[0].y; g.px = pts[0].x - r.left; g.py = pts[0].y - r.top;
    } else {
        g.cx = (pts[0].x + pts[1].x) / 2; g.cy = (pts[0].y + pts[1].y) / 2;
        g.d = Math.max(1, Math.hypot(pts[1].x - pts[0].x, pts[1].y - pts[0].y));
        g.t = tOf(Math.max(LBL, g.cx - r.left));   /* the time under the centre */
    }
    gesture = g;
}
function moveGesture() {
    var g = gesture, pts = touchPoints();
    if (!g || pts.length !== g.n) return;
    var w = g.v1 - g.v0, r = ov.getBoundingClientRect();
    if (g.n === 1) {
        var dx = pts[0].x - g.x, dy = pts[0].y - g.y;
        if (g.tap && Math.abs(dx) <= TAP_PX && Math.abs(dy) <= TAP_PX) return;
        g.tap = false;
        var dt = dx / plotW() * w;
        setView(g.v0 - dt, g.v1 - dt);
        wrap.scrollTop = g.sy - dy;
    } else {
        var cx = (pts[0].x + pts[1].x) / 2, cy = (pts[0].y + pts[1].y) / 2;
        var d = Math.max(1, Math.hypot(pts[1].x - pts[0].x, pts[1].y - pts[0].y));
        var nw = w * g.d / d, a = g.t - (Math.max(LBL, cx - r.left) - LBL) / plotW() * nw;
        setView(a, a + nw);
        wrap.scrollTop = g.sy - (cy - g.cy);
    }
}
ov.addEventListener('pointerdown', function (e) {
    if (e.pointerType === 'mouse') return;
    e.preventDefault();
    try { ov.setPointerCapture(e.pointerId); } catch (err) { /* already gone */ }
    touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
    tip.style.display = 'none';
    wrap.focus({ preventScroll: true });
    /* a second finger ends any tap; a finger beyond two is carried along */
    if (touches.size <= 2) startGesture(touches.size === 1);
});
ov.addEventListener('pointermove', function (e) {
    var p = touches.get(e.pointerId);
    if (!p) return;
    e.preventDefault();
    p.x = e.clientX; p.y = e.clientY;
    moveGesture();
});
function pointerEnd(e) {
    if (!touches.has(e.pointerId)) return;
    var g = gesture;
    touches.delete(e.pointerId);
    touchUntil = performance.now() + 1000;
    if (!touches.size) {
        gesture = null;
        if (e.type === 'pointerup' && g && g.n === 1 && g.tap && g.px >= LBL && g.py >= AX) clickAt(g.px, g.py);
        return;
    }
    startGesture(false);       /* the fingers left go on from where the view is */
}
ov.addEventListener('pointerup', pointerEnd);
ov.addEventListener('pointercancel', pointerEnd);
ov.addEventListener('lostpointercapture', pointerEnd);
/** A click on the timeline at canvas point (x, y): a span shows its details
 *  (/api/span) and is outlined; a merged block is zoomed into; nothing
 *  there clears the selection. */
function clickAt(x, y) {
    var R = recAt(x, y);
    if (!R) {
        highlight = null; view.selected = null; arrows = []; view.arrows = [];
        $('details').textContent = 'click a span on the timeline';
        redraw();
        return;
    }
    if (R.count > 1) {
        var pad = R.dur * 0.05;
        setView(R.start - pad, R.start + R.dur + pad);
        return;
    }
    showSpan(R.thread, R.depth, R.start + R.dur / 2);
}
/** A place's text: "name @ start (duration)" on its thread. */
function placeText(p) {
    var L = laneOf[p.thread];
    return short(M.names[p.name] || '', 200) + ' @ ' + fmt(p.start_ns) + ' (' + fmt(p.dur_ns) + ')' +
        (L ? ' \u2014 ' + short(L.name || ('thread ' + L.t), 60) : '');
}
/** A clickable details cell that goes to place p (a span or an activity). */
function goCell(cell, p) {
    cell.className = 'go';
    cell.addEventListener('click', function () { goTo(p); });
}
/** A device activity's details (kind, device, stream, sizes, its runtime or
 *  driver API call, the span that launched it: a click there goes to it). */
function deviceRows(j, row) {
    var d = j.device;
    row('kind', d.kind).id = 'd-kind';
    row('device', 'GPU ' + d.device + ', stream ' + d.stream);
    row('correlation', String(d.correlation));
    if (d.kind === 'kernel') {
        row('grid', d.grid.join(' \u00d7 ')).id = 'd-grid';
        row('block', d.block.join(' \u00d7 ')).id = 'd-block';
    } else {
        row('bytes', String(d.bytes)).id = 'd-bytes';
        if (j.dur_ns > 0) row('bandwidth', (d.bytes / j.dur_ns).toFixed(2) + ' GB/s');
    }
    if (j.api) row('API call', short(M.names[j.api.name] || '', 200) + ' @ ' + fmt(j.api.start_ns) + ' (' + fmt(j.api.dur_ns) + ')').id = 'd-api';
    var c = row('launched by', j.launch ? placeText(j.launch) : 'no span (launched outside the spans of its region)');
    c.id = 'd-launch';
    if (j.launch) goCell(c, j.launch);
}
/** A span's launched activities (their number, the first names; a click
 *  goes to the first). */
function launchedRows(j, row) {
    var c = row('launched', j.launched_total + ' device activit' + (j.launched_total === 1 ? 'y' : 'ies') +
        (j.launched.length < j.launched_total ? ' (flows for the first ' + j.launched.length + ')' : '') +
        ': ' + j.launched.slice(0, 5).map(function (a) { return short(M.names[a.name] || '', 60); }).join(', ') +
        (j.launched.length > 5 ? ', \u2026' : ''));
    c.id = 'd-launched';
    goCell(c, j.launched[0]);
}
var spanSeq = 0;
function showSpan(thread, depth, t) {
    var my = ++spanSeq;
    inflight++;
    apiJson('/api/span?thread=' + thread + '&depth=' + depth + '&t=' + Math.floor(t)).then(function (j) {
        if (my !== spanSeq) return;
        var box = $('details');
        box.textContent = '';
        if (j._status === 404 || j.error) {
            box.textContent = 'no span there'; highlight = null; view.selected = null; arrows = []; view.arrows = []; redraw(); return;
        }
        highlight = { thread: j.thread, depth: j.depth, start: j.start_ns, dur: j.dur_ns };
        view.selected = { name: M.names[j.name], thread: j.thread, depth: j.depth, start_ns: j.start_ns, dur_ns: j.dur_ns, self_ns: j.self_ns };
        var L = laneOf[j.thread];
        var tb = document.createElement('table');
        function row(k, v) {
            var tr = tb.insertRow(), a = tr.insertCell(), b = tr.insertCell();
            a.textContent = k; b.textContent = v; b.title = v.length < 4096 ? v : '';
            return b;
        }
        var nm = row('name', M.names[j.name] || '');
        nm.id = 'd-name';
        var sw = document.createElement('span'); sw.className = 'sw';
        sw.style.background = M.colors[j.name] || '#999';
        nm.insertBefore(sw, nm.firstChild);
        row('start', fmt(j.start_ns)).id = 'd-start';
        row('duration', fmt(j.dur_ns)).id = 'd-dur';
        row('self', fmt(j.self_ns)).id = 'd-self';
        row('end', fmt(j.start_ns + j.dur_ns));
        row('thread', L ? short(procName(L.proc), 200) + ' / ' + short(L.name || ('thread ' + L.t), 200) : String(j.thread));
        row('depth', String(j.depth));
        row('path', (j.path || []).map(function (i) { return short(M.names[i] || '', 200); }).join(' \u203a ')).id = 'd-path';
        arrows = flowsOf(j);
        if (j.device) deviceRows(j, row);
        if (j.launched) launchedRows(j, row);
        view.selected.launch = j.launch || null;
        view.selected.device = j.device || null;
        view.selected.launched_total = j.launched_total || 0;
        view.arrows = arrows.slice();
        box.appendChild(tb);
        redraw();
    }).catch(failed).then(function () { inflight--; });
}
document.addEventListener('keydown', function (e) {
    if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'BUTTON' || e.target.tagName === 'SUMMARY')) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var k = e.key;
    if (k === '+' || k === '=') zoomAround((v0 + v1) / 2, 0.5);
    else if (k === '-' || k === '_') zoomAround((v0 + v1) / 2, 2);
    else if (k === 'ArrowLeft') pan(-0.1);
    else if (k === 'ArrowRight') pan(0.1);
    else if (k === '0' || k === 'Home') setView(0, T1);
    else return;
    e.preventDefault();
});
wrap.addEventListener('scroll', function () { redraw(); schedule(); });
window.addEventListener('resize', function () { resize(); schedule(); });
$('reset').addEventListener('click', function () { setView(0, T1); });
$('zin').addEventListener('click', function () { zoomAround((v0 + v1) / 2, 0.5); });
$('zout').addEventListener('click', function () { zoomAround((v0 + v1) / 2, 2); });
$('quit').addEventListener('click', function () {
    api('/api/quit', { method: 'POST' }).then(function () {
        stopped = true; view.stopped = true;
        setStatus('the server has stopped: close this page');
        $('quit').disabled = true;
    }).catch(failed);
});

/* --- panels: legend, table, tree, flame graph, search --------------------- */
function swatch(name) {
    var s = document.createElement('span'); s.className = 'sw';
    s.style.background = M.colors[name] || '#999';
    return s;
}
var legendDone = false;
/** The legend: the regions with the most time in the recording (the
 *  static page's legend: a swatch and the name, most total time first). */
function buildLegend(table) {
    legendDone = true;
    var box = $('legend'), MAXL = 40;
    box.textContent = '';
    table.slice(0, MAXL).forEach(function (r) {
        var e = document.createElement('span'); e.className = 'lg';
        e.appendChild(swatch(r.name));
        var t = document.createElement('span'); t.className = 'nm';
        t.textContent = short(M.names[r.name] || '', 300); t.title = short(M.names[r.name] || '', 4096);
        e.appendChild(t);
        box.appendChild(e);
    });
    if (table.length > MAXL) {
        var more = document.createElement('span'); more.className = 'lg meta';
        more.textContent = '+' + (table.length - MAXL) + ' more (the table below)';
        box.appendChild(more);
    }
}
function cellNs(tr, v) {
    var td = tr.insertCell(); td.className = 'n';
    if (v === null || v === undefined || isNaN(v)) { td.textContent = '-'; return; }
    td.dataset.v = String(Math.round(v)); td.textContent = fmt(v);
}
var sortState = { col: -1, asc: false };
function showWindow(j) {
    /* the table: the static page's columns and cells */
    var tb = $('stats').tBodies[0];
    var rows = document.createDocumentFragment();
    var MAXR = 2000;
    j.table.slice(0, MAXR).forEach(function (r) {
        var tr = document.createElement('tr');
        var td = tr.insertCell(); td.dataset.v = short(M.names[r.name] || '', 4096); td.textContent = short(M.names[r.name] || '', 300);
        var c = tr.insertCell(); c.className = 'n'; c.dataset.v = String(r.calls); c.textContent = String(r.calls);
        cellNs(tr, r.total_ns); cellNs(tr, r.self_ns); cellNs(tr, r.mean_ns); cellNs(tr, r.min_ns); cellNs(tr, r.max_ns);
        rows.appendChild(tr);
    });
    tb.textContent = '';
    tb.appendChild(rows);
    if (sortState.col >= 0) sortTable(sortState.col, sortState.asc);
    $('summary').textContent = M.nspans + ' spans, ' + M.names.length + ' regions, ' + M.threads.length +
        ' threads in ' + M.procs.length + ' processes, ' + fmt(T1) + ' from first start to last end; window: ' +
        j.calls + ' calls start in it' + (j.table.length > MAXR ? ' (' + MAXR + ' of ' + j.table.length + ' regions listed)' : '');
    showTree(j.tree);
    drawFlame(j.tree);
    view.windowCalls = j.calls;
}
/* sorting by a header's click: the static page's sort_js (data-v, text in
 * the first column, numbers in the others, cells without data-v last) */
function sortTable(ci, asc) {
    var tb = $('stats');
    var rows = Array.prototype.slice.call(tb.tBodies[0].rows);
    rows.sort(function (a, b) {
        var x = a.cells[ci].getAttribute('data-v'), y = b.cells[ci].getAttribute('data-v');
        if (x === null || y === null) return (x === null) - (y === null);
        var c = ci === 0 ? x.localeCompare(y) : (+x) - (+y);
        return asc ? c : -c;
    });
    rows.forEach(function (r) { tb.tBodies[0].appendChild(r); });
}
Array.prototype.forEach.call($('stats').tHead.rows[0].cells, function (th, ci) {
    th.addEventListener('click', function () {
        sortState.asc = sortState.col === ci ? !sortState.asc : true;
        sortState.col = ci;
        sortTable(ci, sortState.asc);
    });
});
function treeTotal(node) {
    var s = 0; (node.children || []).forEach(function (c) { s += c.total_ns; }); return s;
}
function showTree(root) {
    var box = $('tree'), all = treeTotal(root) || 1;
    box.textContent = '';
    function label(el, n) {
        el.appendChild(swatch(n.name));
        el.appendChild(document.createTextNode(short(M.names[n.name] || '', 300)));
        var v = document.createElement('span'); v.className = 'v';
        v.textContent = n.calls + ' calls, total ' + fmt(n.total_ns) + ' (' + (100 * n.total_ns / all).toFixed(1) + ' %), self ' + fmt(n.self_ns);
        el.appendChild(v);
    }
    function add(parent, nodes, open, depth) {
        nodes.slice().sort(function (a, b) { return b.total_ns - a.total_ns; }).slice(0, 500).forEach(function (n) {
            if (!n.children || !n.children.length) {
                var d = document.createElement('div'); d.className = 'leaf'; label(d, n); parent.appendChild(d); return;
            }
            var det = document.createElement('details'), sum = document.createElement('summary');
            label(sum, n); det.appendChild(sum);
            var filled = false;
            function fill() { if (!filled) { filled = true; add(det, n.children, false, depth + 1); } }
            det.addEventListener('toggle', function () { if (det.open) fill(); });  /* built when first opened */
            parent.appendChild(det);
            if (open) { det.open = true; fill(); }
        });
    }
    add(box, root.children || [], true, 0);
    if (!(root.children || []).length) box.textContent = 'no calls start in the window';
}
var flameRects = [];
function drawFlame(root) {
    var cv = $('flame'), w = cv.clientWidth || 800, rows = 0;
    (function depth(n, d) { if (d > rows) rows = d; (n.children || []).forEach(function (c) { depth(c, d + 1); }); })(root, 0);
    rows = Math.min(rows, 60);
    var h = Math.max(ROW, rows * ROW);
    cv.style.height = h + 'px'; cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
    var c = cv.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, w, h); c.font = '11px sans-serif'; c.textBaseline = 'middle';
    var all = treeTotal(root) || 1, k = w / all;
    flameRects = [];
    (function walk(nodes, x, d) {
        if (d >= rows) return;
        nodes.forEach(function (n) {
            var ww = n.total_ns * k;
            if (ww >= 0.5) {
                var y = (rows - 1 - d) * ROW;   /* the roots at the bottom: a flame graph */
                c.fillStyle = M.colors[n.name] || '#999';
                c.fillRect(x, y + 1, Math.max(1, ww - 0.5), ROW - 2);
                flameRects.push({ x: x, y: y, w: ww, n: n });
                if (ww > 30) {
                    var t = fitText(c, M.names[n.name] || '', ww - 6);
                    if (t) { c.fillStyle = '#111'; c.fillText(t, x + 3, y + ROW / 2); }
                }
                walk(n.children || [], x, d + 1);
            }
            x += ww;
        });
    })(root.children || [], 0, 0);
    view.flameDrawn = flameRects.length;
}
$('flame').addEventListener('mousemove', function (e) {
    var r = e.target.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top, hit = null;
    flameRects.forEach(function (f) { if (x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + ROW) hit = f; });
    if (!hit) { tip.style.display = 'none'; return; }
    tip.textContent = short(M.names[hit.n.name] || '', 300) + '\ncalls: ' + hit.n.calls + '\ntotal: ' + fmt(hit.n.total_ns) + '\nself: ' + fmt(hit.n.self_ns);
    tip.style.left = (e.clientX + 12) + 'px'; tip.style.top = (e.clientY + 12) + 'px'; tip.style.display = 'block';
});
$('flame').addEventListener('mouseleave', function () { tip.style.display = 'none'; });
/* a click on a flame graph's box: its region's calls in the search panel */
$('flame').addEventListener('click', function (e) {
    var r = e.target.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top, hit = null;
    flameRects.forEach(function (f) { if (x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + ROW) hit = f; });
    if (!hit) return;
    var q = String(M.names[hit.n.name] || '').slice(0, 200);
    $('q').value = q;
    search(q);
});

var searchSeq = 0, searchTimer = null;
function search(text) {
    var my = ++searchSeq, box = $('search');
    if (!text) { box.textContent = 'type a region name above'; return Promise.resolve(null); }
    inflight++;
    return apiJson('/api/search?q=' + encodeURIComponent(text) + '&limit=100').then(function (j) {
        if (my !== searchSeq) return null;
        box.textContent = '';
        var h = document.createElement('div');
        h.textContent = j.names.length + ' matching region' + (j.names.length === 1 ? '' : 's') + ', ' +
            j.hits.length + (j.hits.length >= 100 ? '+' : '') + ' call' + (j.hits.length === 1 ? '' : 's') + ' (click one to zoom to it)';
        box.appendChild(h);
        var ul = document.createElement('ul');
        j.names.slice(0, 50).forEach(function (n) {
            var li = document.createElement('li'); li.className = 'name';
            li.appendChild(swatch(n)); li.appendChild(document.createTextNode(short(M.names[n] || '', 300)));
            ul.appendChild(li);
        });
        box.appendChild(ul);
        var ul2 = document.createElement('ul');
        j.hits.forEach(function (hit) {
            var li = document.createElement('li'); li.className = 'hit';
            var L = laneOf[hit.thread];
            li.appendChild(swatch(hit.name));
            li.appendChild(document.createTextNode(short(M.names[hit.name] || '', 200) + ' @ ' + fmt(hit.start_ns) +
                ', ' + fmt(hit.dur_ns) + (L ? ' \u2014 ' + short(L.name || ('thread ' + L.t), 60) : '')));
            li.addEventListener('click', function () { goTo(hit); });
            ul2.appendChild(li);
        });
        box.appendChild(ul2);
        view.searchResult = j;
        return j;
    }).catch(failed).then(function (r) { inflight--; return r; });
}
/** Zooms to a span (a search hit) and highlights it. */
function goTo(hit) {
    var pad = Math.max(hit.dur_ns * 0.25, 50);
    highlight = { thread: hit.thread, depth: hit.depth, start: hit.start_ns, dur: hit.dur_ns };
    setView(hit.start_ns - pad, hit.start_ns + hit.dur_ns + pad);
    var L = laneOf[hit.thread];
    if (L) {           /* its row into view */
        var y = L.y + hit.depth * ROW;
        if (y < wrap.scrollTop + AX || y + ROW > wrap.scrollTop + H) wrap.scrollTop = Math.max(0, y - AX - 2 * ROW);
    }
    showSpan(hit.thread, hit.depth, hit.start_ns + hit.dur_ns / 2);
}
$('q').addEventListener('input', function () {
    clearTimeout(searchTimer);
    var v = this.value;
    searchTimer = setTimeout(function () { searchTimer = null; search(v); }, 250);
});
$('q').addEventListener('keydown', function (e) {
    if (e.key === 'Enter') { clearTimeout(searchTimer); searchTimer = null; search(this.value); }
});

/* --- start ---------------------------------------------------------------- */
var view = window.spsView = {
    ready: false, drawn: 0, drawnSpans: 0, frames: 0, renderer: null, stopped: false,
    selected: null, searchResult: null, counters: 0, flameDrawn: 0, windowCalls: null,
    /** The visible window, [t0, t1] ns relative to meta.t0_ns. */
    view: function () { return [v0, v1]; },
    zoomTo: function (a, b) { setView(a, b); },
    /** Client x of time t (relative ns) in the current view. */
    pixelOf: function (t) { return ov.getBoundingClientRect().left + xOf(t); },
    /** Client y of the middle of the row of (thread, depth). */
    rowY: function (thread, depth) {
        var L = laneOf[thread];
        return L ? ov.getBoundingClientRect().top + L.y - scrollY() + depth * ROW + ROW / 2 : null;
    },
    /** The rectangles of the last frame, lane by lane, as records. */
    records: function () {
        var out = [];
        frameLanes.forEach(function (FL) { for (var i = FL.first; i < FL.first + FL.n; i++) out.push(frameRec(FL, i)); });
        return out;
    },
    /** True when no request is waiting and the last frame shows the last answer. */
    idle: function () { return inflight === 0 && timer === null && winTimer === null && !needDraw && searchTimer === null && hoverTimer === null; },
    search: function (text) { $('q').value = text; return search(text); },
    /** The selection's flows as client points: [{from: {x, y}, to: {x, y}}]. */
    arrowPoints: function () {
        var r = ov.getBoundingClientRect();
        return arrows.map(function (A) {
            var a = arrowEnd(A.from), b = arrowEnd(A.to);
            return a && b ? { from: { x: r.left + a.x, y: r.top + a.y }, to: { x: r.left + b.x, y: r.top + b.y } } : null;
        });
    },
    /** The hovered record's flows as client points (as arrowPoints). */
    hoverArrowPoints: function () {
        var r = ov.getBoundingClientRect();
        return hoverArrows.map(function (A) {
            var a = arrowEnd(A.from), b = arrowEnd(A.to);
            return a && b ? { from: { x: r.left + a.x, y: r.top + a.y }, to: { x: r.left + b.x, y: r.top + b.y } } : null;
        });
    },
    arrows: [], arrowsDrawn: 0, hoverArrows: 0,
    goTo: goTo,
    meta: function () { return M; }
};
var forced = Q.get('renderer');
renderer = forced === '2d' ? null : makeWebGL2(rectsCv);
if (!renderer) renderer = make2D(rectsCv);
view.renderer = renderer.name;
document.body.dataset.renderer = renderer.name;
apiJson('/api/meta').then(function (m) {
    if (m._status !== 200 || !m.names) throw new Error('/api/meta: ' + (m.error || 'no answer'));
    M = m;
    colRGB = M.colors.map(parseColor);
    T1 = Math.max(1, M.t1_rel_ns);
    $('title').textContent = M.files.map(function (f) { return short(f.path, 200); }).join(', ');
    document.title = 'spanscope view: ' + short(M.files.map(function (f) { return f.path.split('/').pop(); }).join(', '), 100);
    layout();
    /* the timeline as tall as its lanes, within most of the window */
    wrap.style.height = Math.round(Math.min(contentH + 2, Math.max(240, window.innerHeight * 0.7))) + 'px';
    resize();
    setView(0, T1);
    view.ready = false;
}).catch(failed);
})();
