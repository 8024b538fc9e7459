// trafficlab's comparison page: overlays the compared runs' charts, one colour per
// run (its column in the table), from the JSON document in #compare-data. It draws
// with page.js's helpers (trafficlab), so that each panel records what it drew as
// on the run page: data-rendered, data-points, and <body data-error> on a failure.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
	const {
		PALETTE, AXIS, LOG, trim, fmtMS, fmtCount, perSec, pctOfX,
		empty, plot, panel, nonNull, timeAxis, timeX, cursor, timeSeries, withEnd, spectrumFrame, groupLabels,
	} = trafficlab;
	const D = JSON.parse(document.getElementById("compare-data").textContent);
	const runs = D.runs || [];
	const colour = k => PALETTE[k % PALETTE.length];

	// The table's column heads wear their run's colour, as the legends do.
	document.querySelectorAll(".swatch[data-run]").forEach(s => { s.style.background = colour(Number(s.dataset.run)); });

	// Every run is on one time axis, from the first point's start to the last's end,
	// so that the time charts line up and the cursor moves through all at once.
	const T = D.t || [];
	const X = T.length ? T.concat([T[T.length - 1] + D.step_s]) : [];
	// A run's series; a result without one (no request succeeded) is all gaps.
	const lines = key => runs.map(r => r[key] || T.map(() => null));
	// A share to three digits, and more for one short of all, which must not read
	// 100% (as the text's percentages).
	const share = v => {
		if (v == null) return "–";
		let d = 3, s = trim(100 * v, d);
		while (s === "100" && v < 1 - 1e-12 && d < 15) s = trim(100 * v, ++d);
		return s + "%";
	};

	// overTime draws one line per run of the series key. Rates hold over their
	// point's interval and are drawn as steps; latencies as lines through the points.
	function overTime(sec, box, key, stepped, y, yAxis, fmt) {
		const ls = lines(key);
		plot(sec, box, {
			scales: { x: timeX(), y },
			axes: [timeAxis(), Object.assign({}, AXIS, yAxis, { size: 60 })],
			series: [timeSeries].concat(runs.map((r, k) => ({
				label: r.name, stroke: colour(k), width: 1.5, points: { show: false },
				paths: stepped ? uPlot.paths.stepped({ align: 1 }) : undefined,
				value: (u, v, si, i) => i == null ? "–" : fmt(ls[k][i]),
			}))),
			cursor: cursor(),
		}, [X].concat(ls.map(l => stepped ? withEnd(l) : l.concat([null]))), nonNull(ls));
	}
	const rates = { range: (u, lo, hi) => [0, hi * 1.05 || 1] };
	const logMS = { distr: 3, log: 10 };
	const msAxis = Object.assign({}, LOG, { label: "latency", values: (u, vals) => vals.map(fmtMS) });

	panel("throughput", (sec, box) => {
		if (!nonNull(lines("throughput"))) return empty(sec, box, "These results have no timeline.");
		overTime(sec, box, "throughput", true, rates,
			{ label: "requests / s", values: (u, vals) => vals.map(fmtCount) }, perSec);
	});

	panel("errors", (sec, box) => {
		if (!lines("errors").some(l => l.some(v => v > 0))) return empty(sec, box, "No errors in any run.");
		overTime(sec, box, "errors", true, rates,
			{ label: "errors / s", values: (u, vals) => vals.map(fmtCount) }, perSec);
	});

	panel("latency-p99", (sec, box) => {
		if (!nonNull(lines("p99"))) return empty(sec, box, "No request succeeded in any run.");
		overTime(sec, box, "p99", false, logMS, msAxis, fmtMS);
	});

	panel("latency-p50", (sec, box) => {
		if (!nonNull(lines("p50"))) return empty(sec, box, "No request succeeded in any run.");
		overTime(sec, box, "p50", false, logMS, msAxis, fmtMS);
	});

	panel("latency-spectrum", (sec, box) => {
		if (!runs.some(r => r.spectrum && r.spectrum.x.length)) return empty(sec, box, "These results have no latency spectrum.");
		// The runs' percentile steps differ: join puts them on one x axis, leaving
		// each line undefined, which uPlot draws through, at the others' steps.
		const data = uPlot.join(runs.map(r => r.spectrum ? [r.spectrum.x, r.spectrum.ms] : [[], []]));
		plot(sec, box, Object.assign(spectrumFrame(data[0][data[0].length - 1]), {
			series: [{ label: "percentile", value: (u, v) => v == null ? "–" : pctOfX(v) }].concat(runs.map((r, k) => ({
				label: r.name, stroke: colour(k), width: 2, points: { show: false }, value: (u, v) => fmtMS(v),
			}))),
			cursor: { drag: { x: false, y: false } },
		}), data, nonNull(data.slice(1)));
	});

	panel("pod-shares", (sec, box) => {
		const services = D.services || [];
		// A slot per rank of each service, as many as the service's pods in the run
		// that has the most.
		const slots = [];
		services.forEach((svc, s) => {
			const n = Math.max(0, ...runs.map(r => (r.shares[s] || []).length));
			for (let rank = 0; rank < n; rank++) slots.push({ service: svc, rank, of: s });
		});
		if (!slots.length) return empty(sec, box, "No pod finished a request in these runs.");
		const values = runs.map(r => slots.map(sl => {
			const a = r.shares[sl.of] || [];
			return sl.rank < a.length ? a[sl.rank] : null;
		}));
		const several = services.length > 1;
		const name = i => (several ? slots[i].service + " " : "") + "#" + (slots[i].rank + 1);
		// The runs' bars side by side in each slot.
		const width = 0.8 / runs.length;
		const series = [{ label: "pod", value: (u, i) => i == null || !slots[i] ? "–" : name(i) }];
		runs.forEach((r, k) => series.push({
			label: r.name, stroke: colour(k), fill: colour(k), width: 0, points: { show: false },
			paths: uPlot.paths.bars({
				disp: {
					x0: { unit: 1, values: () => slots.map((sl, i) => i - 0.4 + k * width) },
					size: { unit: 1, values: () => [width] },
				},
			}),
			value: (u, v) => share(v),
		}));
		plot(sec, box, {
			scales: { x: { time: false, range: () => [-0.5, slots.length - 0.5] }, y: { range: (u, lo, hi) => [0, hi * 1.08 || 1] } },
			axes: [
				Object.assign({}, AXIS, {
					label: "pods by requests, busiest first", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500], grid: { show: false },
					values: (u, vals) => vals.map(v => Number.isInteger(v) && slots[v] ? String(slots[v].rank + 1) : ""),
				}),
				Object.assign({}, AXIS, { label: "share of requests", values: (u, vals) => vals.map(share), size: 60 }),
			],
			series, cursor: { drag: { x: false, y: false } },
			hooks: { draw: [groupLabels(slots.map(sl => sl.service))] },
		}, [slots.map((sl, i) => i)].concat(values), nonNull(values));
	});
});
