// trafficlab's HTML report: draws the panels from the JSON document in #data with
// uPlot. Each chart panel records what it drew on its <section>: data-rendered is
// "chart" once uPlot has drawn it (data-points says how many values), or "empty"
// with a note when the run has nothing for it; any error marks <body data-error>.
// A test reading the DOM can so tell a drawn page from a blank one.
"use strict";

window.onerror = function (msg, src, line) {
	document.body.setAttribute("data-error", msg + " (line " + line + ")");
};

// trafficlab is what this page shares with the comparison page (compare.js, which
// loads after this file): colours, formats, axes, and drawing a panel so that it
// records what it drew.
const trafficlab = (function () {
	// Colours: one per pod (busiest first), node or compared run.
	const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
		"#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#bcbd22", "#7f3c8d"];
	const HEIGHT = 260;
	const AXIS = { stroke: "#57606a", grid: { stroke: "#eaeef2", width: 1 }, ticks: { stroke: "#d0d7de", width: 1 } };
	const TIME_INCRS = [0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
		3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];

	// ---- formatting ----------------------------------------------------------

	function trim(x, digits) {
		return String(Number(x.toPrecision(digits)));
	}
	function fmtMS(v) {
		if (v == null) return "–";
		if (v >= 1000) return trim(v / 1000, 3) + "s";
		if (v >= 1) return trim(v, 3) + "ms";
		return trim(v * 1000, 3) + "µs";
	}
	function fmtT(s) {
		if (s == null) return "–";
		if (s < 60) return trim(s, 4) + "s";
		s = Math.round(s);
		const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
		return (h ? h + "h" : "") + (m ? m + "m" : "") + (r ? r + "s" : "");
	}
	function fmtCount(v) {
		if (v == null) return "–";
		const a = Math.abs(v);
		if (a >= 1e6) return trim(v / 1e6, 3) + "M";
		if (a >= 1e4) return trim(v / 1e3, 3) + "k";
		return a >= 100 || Number.isInteger(v) ? Math.round(v).toLocaleString("en") : trim(v, 3);
	}
	const perSec = v => v == null ? "–" : fmtCount(v) + "/s";
	// The percentile at x = 1/(1−q), to the digits that x carries: a nine per decade.
	const pctOfX = x => x == null ? "" : trim(100 * (1 - 1 / x), Math.max(3, Math.ceil(Math.log10(x)) + 2)) + "%";

	// Log axes get a line per power of ten, and at 2 and 5 when the range is narrow:
	// uPlot's default also draws 2…9, too dense to read.
	const LOG = {
		splits: (u, axisIdx, min, max) => {
			const lo = Math.floor(Math.log10(min)), hi = Math.ceil(Math.log10(max));
			const out = [];
			for (let e = lo; e <= hi; e++) {
				for (const m of hi - lo <= 2 ? [1, 2, 5] : [1]) {
					const v = m * Math.pow(10, e);
					if (v >= min * 0.999 && v <= max * 1.001) out.push(v);
				}
			}
			return out;
		},
		filter: (u, splits) => splits,
	};

	// ---- panels ---------------------------------------------------------------

	const charts = [];

	function empty(sec, box, note) {
		box.innerHTML = "";
		const p = document.createElement("p");
		p.className = "note";
		p.textContent = note;
		box.appendChild(p);
		sec.setAttribute("data-rendered", "empty");
		sec.setAttribute("data-points", "0");
	}

	// plot draws one uPlot chart into box and marks sec once every chart of the
	// panel has drawn.
	function plot(sec, box, opts, data, points) {
		const pending = Number(sec.getAttribute("data-pending") || 0) + 1;
		sec.setAttribute("data-pending", pending);
		let drawn = false;
		opts.width = Math.max(box.clientWidth, 300);
		opts.height = opts.height || HEIGHT;
		opts.hooks = opts.hooks || {};
		opts.hooks.draw = (opts.hooks.draw || []).concat(() => {
			if (drawn) return;
			drawn = true;
			const left = Number(sec.getAttribute("data-pending")) - 1;
			sec.setAttribute("data-pending", left);
			sec.setAttribute("data-points", Number(sec.getAttribute("data-points") || 0) + points);
			if (left === 0) sec.setAttribute("data-rendered", "chart");
		});
		charts.push([new uPlot(opts, data, box), box]);
	}

	function panel(id, draw) {
		const sec = document.getElementById(id);
		if (!sec) return;
		const box = sec.querySelector(".chart");
		try {
			draw(sec, box);
		} catch (e) {
			sec.setAttribute("data-rendered", "error");
			const p = document.createElement("p");
			p.className = "panel-error";
			p.textContent = "This panel failed to draw: " + e;
			box.appendChild(p);
			document.body.setAttribute("data-error", id + ": " + e);
		}
	}

	const nonNull = arrs => arrs.reduce((n, a) => n + a.filter(v => v != null).length, 0);

	function timeAxis() {
		return Object.assign({ values: (u, vals) => vals.map(fmtT), incrs: TIME_INCRS, space: 60 }, AXIS);
	}
	const timeX = () => ({ time: false });
	const cursor = () => ({ sync: { key: "time" }, drag: { x: true, y: false } });
	const timeSeries = { label: "time", value: (u, v) => fmtT(v) };

	// Bucketed series hold over [t, t + step): the step paths need the end too.
	const withEnd = a => a.concat([a.length ? a[a.length - 1] : null]);

	// spectrumFrame is the scales and axes of a latency percentile spectrum whose
	// steps reach xMax: percentiles on a log scale of 1/(1−q), latency on a log scale.
	function spectrumFrame(xMax) {
		// Room after the last step, so that the last decade's label fits.
		const right = Math.max(10, xMax) * 1.5;
		return {
			scales: { x: { time: false, distr: 3, log: 10, range: () => [1, right] }, y: { distr: 3, log: 10 } },
			axes: [
				Object.assign({}, AXIS, {
					label: "percentile (log scale of 1 / (1 − q))",
					splits: (u, axisIdx, min, max) => {
						// The median, then a label per nine (per two when they would crowd).
						const perDecade = u.bbox.width / devicePixelRatio / Math.log10(max);
						const out = [2], step = perDecade < 75 ? 100 : 10;
						for (let x = 10; x <= max; x *= step) out.push(x);
						return out;
					},
					filter: (u, splits) => splits,
					values: (u, vals) => vals.map(pctOfX),
				}),
				Object.assign({}, AXIS, LOG, { label: "latency", values: (u, vals) => vals.map(fmtMS), size: 60 }),
			],
		};
	}

	// groupLabels is a draw hook for bars at x = 0, 1, ... of which groups[i] names
	// bar i's group: each group's name over its bars, with a line between groups;
	// nothing when there is one group.
	function groupLabels(groups) {
		const several = new Set(groups).size > 1;
		return u => {
			if (!several) return;
			const ctx = u.ctx, dpr = devicePixelRatio;
			ctx.save();
			ctx.font = 12 * dpr + "px system-ui, sans-serif";
			ctx.fillStyle = "#57606a";
			ctx.strokeStyle = "#afb8c1";
			ctx.setLineDash([4 * dpr, 4 * dpr]);
			let start = 0;
			groups.forEach((g, i) => {
				if (i + 1 < groups.length && groups[i + 1] === g) return;
				const x0 = u.valToPos(start - 0.5, "x", true);
				if (start > 0) {
					ctx.beginPath();
					ctx.moveTo(x0, u.bbox.top);
					ctx.lineTo(x0, u.bbox.top + u.bbox.height);
					ctx.stroke();
				}
				ctx.fillText(g, x0 + 6 * dpr, u.bbox.top + 14 * dpr);
				start = i + 1;
			});
			ctx.restore();
		};
	}

	// Charts follow their column's width.
	let pending = false;
	window.addEventListener("resize", () => {
		if (pending) return;
		pending = true;
		requestAnimationFrame(() => {
			pending = false;
			for (const [u, box] of charts) u.setSize({ width: Math.max(box.clientWidth, 300), height: u.height });
		});
	});

	return {
		PALETTE, HEIGHT, AXIS, LOG, trim, fmtMS, fmtT, fmtCount, perSec, pctOfX,
		empty, plot, panel, nonNull, timeAxis, timeX, cursor, timeSeries, withEnd, spectrumFrame, groupLabels,
	};
})();

// The run page. The comparison page has no #data: it draws with compare.js.
document.addEventListener("DOMContentLoaded", function () {
	const el = document.getElementById("data");
	if (!el) return;
	const D = JSON.parse(el.textContent);
	const {
		PALETTE, HEIGHT, AXIS, LOG, trim, fmtMS, fmtT, fmtCount, perSec, pctOfX,
		empty, plot, panel, nonNull, timeAxis, timeX, cursor, timeSeries, withEnd, spectrumFrame, groupLabels,
	} = trafficlab;

	// Fixed colours per error kind and percentile, so that a pod or a kind looks the
	// same in every chart.
	const OTHERS = "#c3c8ce";
	const KINDS = {
		connection_refused: ["refused", "#e15759"],
		connection_reset: ["reset", "#7f3c8d"],
		connection_closed: ["closed", "#9c755f"],
		timeout: ["timeout", "#f28e2b"],
		http_503: ["503", "#d4a017"],
		errors: ["errors", "#e15759"],
	};
	const PERCENTILES = { "p50": "#59a14f", "p90": "#4e79a7", "p99": "#f28e2b", "p99.9": "#e15759" };

	const podRank = {};
	(D.pod_series && D.pod_series.length ? D.pod_series.map(s => s.name) :
		(D.pods || []).slice().sort((a, b) => b.requests - a.requests).filter(p => p.requests > 0).map(p => p.name))
		.forEach((name, i) => { if (i < PALETTE.length) podRank[name] = i; });
	const podColor = name => name in podRank ? PALETTE[podRank[name]] : OTHERS;
	const kind = k => KINDS[k] || [k, "#8c959f"];

	const T = D.t || [];
	const tEnd = T.length ? T[T.length - 1] + D.step_s : 0;

	// Every time chart spans the whole run, so that they line up and the cursor
	// moves through all of them at once: framed adds the run's start and end to a
	// chart's data, as gaps, where its own times stop short.
	function framed(data) {
		if (!T.length) return data;
		const [x, ...ys] = data;
		const head = !x.length || x[0] > T[0], tail = !x.length || x[x.length - 1] < tEnd;
		return [(head ? [T[0]] : []).concat(x, tail ? [tEnd] : [])].concat(
			ys.map(y => (head ? [null] : []).concat(y, tail ? [null] : [])));
	}
	const stepX = () => withEnd(T).map((v, i) => i === T.length ? tEnd : v);

	// markers draws the scale events as dashed lines over the plot, each with a
	// label whose tooltip is the autoscaler's reason.
	function markers(events, labelled) {
		const place = u => {
			let layer = u.over.querySelector(".markers");
			if (!layer) {
				layer = document.createElement("div");
				layer.className = "markers";
				u.over.appendChild(layer);
			}
			layer.innerHTML = "";
			const width = u.over.clientWidth;
			const services = new Set(events.map(e => e.service)).size;
			events.forEach((e, i) => {
				const x = u.valToPos(e.t, "x");
				if (!(x >= 0 && x <= width)) return;
				const m = document.createElement("div");
				m.className = "marker";
				m.style.left = x + "px";
				const what = (services > 1 ? e.service + " " : "") + e.from + "→" + e.to;
				m.title = fmtT(e.t) + ": " + e.service + " " + e.from + "→" + e.to + (e.reason ? "\n" + e.reason : "");
				if (labelled && events.length <= 30) {
					const s = document.createElement("span");
					s.textContent = what;
					s.style.top = (2 + 15 * (i % 3)) + "px";
					m.appendChild(s);
				}
				layer.appendChild(m);
			});
		};
		return { hooks: { draw: [place] } };
	}
	const events = D.events || [];

	// stacked lays series on top of each other: the first of lines ends up on top.
	// uPlot draws the series in order, each filled down to zero, so the tallest
	// (the whole stack) goes first and each lower one paints over it.
	function stacked(lines) {
		const n = lines.length;
		const sums = [];
		let acc = new Array(T.length).fill(0);
		for (let k = n - 1; k >= 0; k--) {
			acc = acc.map((a, i) => a + (lines[k].values[i] || 0));
			sums[k] = acc;
		}
		return sums;
	}

	panel("pods", (sec, box) => {
		const pods = D.pods || [];
		if (!pods.some(p => p.requests > 0)) return empty(sec, box, "No pod finished a request in this run.");
		const services = [...new Set(pods.map(p => p.service))];
		const colours = pods.map(p => podColor(p.name));
		const rotate = pods.length > 6;
		const longest = Math.max(...pods.map(p => p.name.length));
		const series = [{ label: "pod", value: (u, i) => i == null || !pods[i] ? "–" : pods[i].name }];
		const data = [pods.map((p, i) => i)];
		for (const svc of services) {
			data.push(pods.map(p => p.service === svc ? p.requests : null));
			series.push({
				label: svc, stroke: "#8c959f", fill: "#8c959f", width: 0,
				paths: uPlot.paths.bars({ size: [0.8, 64], disp: { fill: { unit: 3, values: () => colours } } }),
				points: { show: false },
				value: (u, v) => v == null ? "–" : fmtCount(v),
			});
		}
		plot(sec, box, {
			scales: { x: { time: false, range: () => [-0.5, pods.length - 0.5] }, y: { range: (u, lo, hi) => [0, hi * 1.08] } },
			axes: [
				Object.assign({}, AXIS, {
					incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500], space: rotate ? 16 : 40, rotate: rotate ? -40 : 0,
					size: rotate ? Math.min(140, 16 + longest * 6) : 40, grid: { show: false },
					values: (u, vals) => vals.map(v => Number.isInteger(v) && pods[v] ? pods[v].name : ""),
				}),
				Object.assign({}, AXIS, { label: "requests", values: (u, vals) => vals.map(fmtCount), size: 60 }),
			],
			series, legend: { live: true }, cursor: { drag: { x: false, y: false } },
			hooks: { draw: [groupLabels(pods.map(p => p.service))] },
		}, data, pods.length);
	});

	panel("pods-over-time", (sec, box) => {
		const lines = D.pod_series || [];
		if (!lines.length || !T.length) return empty(sec, box, "This result has no per-pod timeline.");
		const sums = stacked(lines);
		plot(sec, box, {
			scales: { x: timeX(), y: { range: (u, lo, hi) => [0, hi * 1.05 || 1] } },
			axes: [timeAxis(), Object.assign({}, AXIS, { label: "requests / s", values: (u, vals) => vals.map(fmtCount), size: 60 })],
			series: [timeSeries].concat(lines.map((l, k) => {
				const c = l.name === "others" ? OTHERS : podColor(l.name);
				return {
					label: l.name, stroke: c, fill: c, width: 1, points: { show: false },
					paths: uPlot.paths.stepped({ align: 1 }),
					value: (u, v, si, i) => i == null ? "–" : perSec(lines[k].values[i]),
				};
			})),
			cursor: cursor(),
			plugins: [markers(events, false)],
		}, framed([stepX()].concat(sums.map(withEnd))), nonNull(lines.map(l => l.values)));
	});

	panel("replicas", (sec, box) => {
		const sets = D.replicas || [];
		if (!sets.length) return empty(sec, box, "This result has no replica counts over time.");
		box.classList.remove("chart");
		for (const rs of sets) {
			const one = document.createElement("div");
			one.className = "chart";
			box.appendChild(one);
			if (sets.length > 1) {
				const h = document.createElement("p");
				h.className = "title-sm";
				h.textContent = rs.service;
				one.appendChild(h);
			}
			const hi = Math.max(1, ...[rs.desired, rs.actual, rs.ready].flat().filter(v => v != null));
			const line = (label, values, stroke, dash) => ({
				label, stroke, width: 2, dash, points: { show: false },
				paths: uPlot.paths.stepped({ align: 1 }),
				value: (u, v) => v == null ? "–" : String(v),
			});
			plot(sec, one, {
				height: sets.length > 1 ? 200 : HEIGHT,
				// From zero while that shows a change of one pod; else around the counts.
				scales: { x: timeX(), y: { range: (u, min, max) => hi <= 20 ? [0, hi + 1] : [Math.max(0, Math.floor(min * 0.9)), Math.ceil(max * 1.05)] } },
				axes: [timeAxis(), Object.assign({}, AXIS, { label: "pods", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500], size: 50 })],
				series: [timeSeries,
					line("ready endpoints", rs.ready, "#59a14f"),
					line("actual", rs.actual, "#f28e2b"),
					line("desired", rs.desired, "#4e79a7", [6, 4])],
				cursor: cursor(),
				plugins: [markers(events.filter(e => e.service === rs.service), true)],
			}, framed([rs.t, rs.ready, rs.actual, rs.desired]), nonNull([rs.ready, rs.actual, rs.desired]));
		}
	});

	panel("errors", (sec, box) => {
		const lines = D.errors || [];
		if (!lines.length) return empty(sec, box, "No errors in this run.");
		const sums = stacked(lines);
		plot(sec, box, {
			scales: { x: timeX(), y: { range: (u, lo, hi) => [0, hi * 1.1 || 1] } },
			axes: [timeAxis(), Object.assign({}, AXIS, { label: "errors / s", values: (u, vals) => vals.map(fmtCount), size: 60 })],
			series: [timeSeries].concat(lines.map((l, k) => ({
				label: kind(l.name)[0], stroke: kind(l.name)[1], fill: kind(l.name)[1], width: 0, points: { show: false },
				paths: uPlot.paths.bars({ align: 1, size: [1, Infinity, 2] }),
				value: (u, v, si, i) => i == null ? "–" : perSec(lines[k].values[i]),
			}))),
			cursor: cursor(),
			plugins: [markers(events, true)],
		}, framed([T].concat(sums.map(a => a.map(v => v > 0 ? v : null)))), lines.reduce((n, l) => n + l.values.filter(v => v > 0).length, 0));
	});

	// latencyLines draws latency lines over time on a log scale, each with its colour
	// and width.
	function latencyLines(sec, box, lines, label, style) {
		plot(sec, box, {
			scales: { x: timeX(), y: { distr: 3, log: 10 } },
			axes: [timeAxis(), Object.assign({}, AXIS, LOG, { label, values: (u, vals) => vals.map(fmtMS), size: 60 })],
			series: [timeSeries].concat(lines.map((l, k) => Object.assign({
				label: l.name, value: (u, v) => fmtMS(v),
			}, style(l, k)))),
			cursor: cursor(),
			plugins: [markers(events, false)],
		}, framed([T].concat(lines.map(l => l.values))), nonNull(lines.map(l => l.values)));
	}

	panel("latency-over-time", (sec, box) => {
		const lines = D.latency || [];
		if (!lines.length) return empty(sec, box, "No request succeeded in this run.");
		latencyLines(sec, box, lines, "latency", l => ({ stroke: PERCENTILES[l.name], width: l.name === "p50" ? 2 : 1.5 }));
	});

	panel("service-latency", (sec, box) => {
		const lines = D.service_p99 || [];
		if (!lines.length) return empty(sec, box, "No service answered a request.");
		latencyLines(sec, box, lines, "p99 at its pods", (l, k) => ({ stroke: PALETTE[k % PALETTE.length], width: 1.5 }));
	});

	panel("samples", (sec, box) => {
		const s = D.samples;
		if (!s || !s.t.length) return empty(sec, box, "No requests were sampled (the scenario's report.samples is 0).");
		// Latency 0 has no place on a log scale: such requests show at the axis floor.
		const floor = Math.min(...s.ms.filter(v => v > 0), 1) / 2;
		const at = k => s.ms.map((v, i) => s.kind[i] === k ? Math.max(v, floor) : null);
		const dots = (label, colour, size) => ({
			label, stroke: colour, fill: colour, paths: () => null,
			points: { show: true, size, width: 0, stroke: colour, fill: colour },
			value: (u, v) => fmtMS(v),
		});
		const series = [timeSeries, dots("ok", "rgba(78,121,167,0.45)", 3)];
		const data = [s.t, at(-1)];
		(s.kinds || []).forEach((k, i) => {
			series.push(dots(kind(k)[0], kind(k)[1], 7));
			data.push(at(i));
		});
		if (s.of > s.t.length) {
			const note = document.createElement("p");
			note.className = "caption";
			note.textContent = "Showing " + fmtCount(s.t.length) + " of " + fmtCount(s.of) +
				" samples: every failure and the slowest kept, the rest thinned evenly.";
			sec.insertBefore(note, box);
		}
		plot(sec, box, {
			scales: { x: timeX(), y: { distr: 3, log: 10 } },
			axes: [timeAxis(), Object.assign({}, AXIS, LOG, { label: "latency", values: (u, vals) => vals.map(fmtMS), size: 60 })],
			series, cursor: Object.assign(cursor(), { points: { show: false } }),
			plugins: [markers(events, false)],
		}, framed(data), s.t.length);
	});

	panel("latency-histogram", (sec, box) => {
		const h = D.histogram;
		if (!h || !h.counts.some(c => c > 0)) return empty(sec, box, "This result has no latency distribution.");
		const n = h.counts.length;
		const label = i => h.to[i] == null ? "≥ " + fmtMS(h.from[i]) : fmtMS(h.from[i]) + " – " + fmtMS(h.to[i]);
		// Derived buckets are labelled at their lower edges, every k-th one, counted
		// from a power of ten; the scenario's own buckets by their ranges.
		const edges = (u, axisIdx, min, max) => {
			const k = [1, 2, 5, 10, 20].find(k => k * u.bbox.width / devicePixelRatio / n >= 50) || 50;
			const start = Math.max(0, h.from.findIndex(f => Math.abs(Math.log10(f) - Math.round(Math.log10(f))) < 1e-6)) % k;
			const out = [];
			for (let i = start; i <= n; i += k) out.push(i - 0.5);
			return out;
		};
		const edgeOf = v => { const i = v + 0.5; return i < n ? h.from[i] : h.to[n - 1]; };
		plot(sec, box, {
			scales: { x: { time: false, range: () => [-0.5, n - 0.5] }, y: { distr: 3, log: 10 } },
			axes: [
				Object.assign({}, AXIS, h.derived ? {
					label: "latency (log-spaced buckets)", splits: edges, values: (u, vals) => vals.map(v => fmtMS(edgeOf(v))),
				} : {
					label: "latency bucket", incrs: [1, 2, 5, 10, 20, 50], space: 80,
					values: (u, vals) => vals.map(v => Number.isInteger(v) && v < n ? label(v) : ""),
				}, { grid: { show: false } }),
				Object.assign({}, AXIS, LOG, { label: "requests", values: (u, vals) => vals.map(fmtCount), size: 60 }),
			],
			series: [
				{ label: "bucket", value: (u, i) => i == null ? "–" : label(i) },
				{
					label: "requests", stroke: "#4e79a7", fill: "#4e79a7", width: 0, points: { show: false },
					paths: uPlot.paths.bars({ size: [0.9, 60] }), value: (u, v) => fmtCount(v),
				},
			],
			cursor: { drag: { x: false, y: false } },
		}, [h.counts.map((c, i) => i), h.counts.map(c => c > 0 ? c : null)], h.counts.filter(c => c > 0).length);
	});

	panel("latency-spectrum", (sec, box) => {
		const s = D.spectrum;
		if (!s || !s.x.length) return empty(sec, box, "This result has no latency spectrum.");
		plot(sec, box, Object.assign(spectrumFrame(Math.max(...s.x)), {
			series: [
				{ label: "percentile", value: (u, v) => v == null ? "–" : pctOfX(v) },
				{ label: "latency", stroke: "#e15759", width: 2, value: (u, v) => fmtMS(v), points: { show: false } },
			],
			cursor: { drag: { x: false, y: false } },
		}), [s.x, s.ms], s.x.length);
	});

	panel("nodes", (sec, box) => {
		const lines = D.node_cpu || [];
		if (!lines.length || !T.length) return empty(sec, box, "This result has no CPU per node over time.");
		if (D.nodes > lines.length) {
			const note = document.createElement("p");
			note.className = "caption";
			note.textContent = "The chart shows the " + lines.length + " busiest of " + D.nodes + " nodes.";
			box.appendChild(note);
		}
		plot(sec, box, {
			scales: { x: timeX(), y: { range: (u, lo, hi) => [0, hi * 1.1 || 1] } },
			axes: [timeAxis(), Object.assign({}, AXIS, { label: "CPU cores", size: 50 })],
			series: [timeSeries].concat(lines.map((l, k) => ({
				label: l.name, stroke: PALETTE[k % PALETTE.length], width: 1.5,
				value: (u, v) => v == null ? "–" : trim(v, 3) + " cores",
			}))),
			cursor: cursor(),
			plugins: [markers(events, false)],
		}, framed([T].concat(lines.map(l => l.values))), nonNull(lines.map(l => l.values)));
	});
});
