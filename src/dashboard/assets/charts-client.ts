/**
 * The dashboard's charts in the browser: each `canvas[data-chart]` is drawn by Chart.js (served
 * from the bot beside this script, never a CDN) from the JSON in its `data-chart` attribute,
 * which the server wrote (src/dashboard/views/chart-figure.ts). Every series gets a pattern as
 * well as a colour, so the charts read without colour; the numbers are also in a table beside
 * each chart. Kept as text in a module so it ships inside the build like the code; it must hold
 * no backtick and no dollar-brace.
 */
export const CHARTS_CLIENT_JS = String.raw`'use strict';
(function () {
  var Chart = window.Chart;
  if (!Chart) return;
  Chart.defaults.color = '#dbdee1';
  Chart.defaults.borderColor = '#3f4147';
  Chart.defaults.font.family = '"gg sans", "Noto Sans", "Helvetica Neue", Helvetica, Arial, sans-serif';
  Chart.defaults.animation = false;

  // One drawing per pattern number: solid, stripes, dots, cross-hatch, lines across, lines up, rings, back stripes, checks.
  function pattern(index, color) {
    var size = 10;
    var tile = document.createElement('canvas');
    tile.width = size;
    tile.height = size;
    var c = tile.getContext('2d');
    c.fillStyle = color;
    c.strokeStyle = 'rgba(0, 0, 0, 0.55)';
    c.lineWidth = 2;
    c.fillRect(0, 0, size, size);
    switch (index % 9) {
      case 1: c.beginPath(); c.moveTo(0, size); c.lineTo(size, 0); c.moveTo(-2, 2); c.lineTo(2, -2); c.moveTo(size - 2, size + 2); c.lineTo(size + 2, size - 2); c.stroke(); break;
      case 2: c.fillStyle = 'rgba(0, 0, 0, 0.55)'; c.beginPath(); c.arc(size / 2, size / 2, 2, 0, Math.PI * 2); c.fill(); break;
      case 3: c.beginPath(); c.moveTo(0, 0); c.lineTo(size, size); c.moveTo(size, 0); c.lineTo(0, size); c.stroke(); break;
      case 4: c.beginPath(); c.moveTo(0, size / 2); c.lineTo(size, size / 2); c.stroke(); break;
      case 5: c.beginPath(); c.moveTo(size / 2, 0); c.lineTo(size / 2, size); c.stroke(); break;
      case 6: c.beginPath(); c.arc(size / 2, size / 2, 3, 0, Math.PI * 2); c.stroke(); break;
      case 7: c.beginPath(); c.moveTo(0, 0); c.lineTo(size, size); c.moveTo(-2, size - 2); c.lineTo(2, size + 2); c.moveTo(size - 2, -2); c.lineTo(size + 2, 2); c.stroke(); break;
      case 8: c.fillStyle = 'rgba(0, 0, 0, 0.45)'; c.fillRect(0, 0, size / 2, size / 2); c.fillRect(size / 2, size / 2, size / 2, size / 2); break;
      default: break;
    }
    return c.createPattern(tile, 'repeat');
  }

  function draw(canvas) {
    var spec;
    try {
      spec = JSON.parse(canvas.getAttribute('data-chart') || '');
    } catch (error) {
      return;
    }
    var horizontal = spec.type === 'hbar';
    var line = spec.type === 'line';
    var datasets = spec.series.map(function (series) {
      var fill = line ? series.color : pattern(series.pattern, series.color);
      return {
        label: series.label,
        data: series.data,
        stack: series.stack,
        backgroundColor: fill,
        borderColor: series.color,
        borderWidth: line ? 2 : 1,
        pointStyle: ['circle', 'rect', 'triangle', 'rectRot', 'star', 'cross'][series.pattern % 6],
        pointRadius: line ? 2 : 0,
        fill: false,
      };
    });
    var valueAxis = { beginAtZero: true, stacked: !!spec.stacked, title: { display: !!spec.valueTitle, text: spec.valueTitle } };
    var labelAxis = { stacked: !!spec.stacked, ticks: { autoSkip: true, maxRotation: 0 } };
    var chart = new Chart(canvas, {
      type: line ? 'line' : 'bar',
      data: { labels: spec.labels, datasets: datasets },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: horizontal ? 'nearest' : 'index', intersect: false },
        plugins: { legend: { display: datasets.length > 1, labels: { usePointStyle: line } } },
        scales: horizontal ? { x: valueAxis, y: labelAxis } : { x: labelAxis, y: valueAxis },
      },
    });
    canvas.setAttribute('data-drawn', String(chart.data.datasets.length));
  }

  function start() {
    var canvases = document.querySelectorAll('canvas[data-chart]');
    for (var i = 0; i < canvases.length; i += 1) draw(canvases[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
`;
