// The console's live parts: the lag and TPS charts poll their JSON every
// 2 s while the page is visible, the body format switch, confirmations.
(function () {
  "use strict";
  var PERIOD = 2000;

  function draw(canvas, series, colors) {
    var ctx = canvas.getContext("2d");
    var w = canvas.width, h = canvas.height;
    ctx.clearRect(0, 0, w, h);
    var maxV = 1, t0 = Infinity, t1 = -Infinity;
    series.forEach(function (s) {
      s.forEach(function (p) {
        maxV = Math.max(maxV, p[1]);
        t0 = Math.min(t0, p[0]);
        t1 = Math.max(t1, p[0]);
      });
    });
    if (!(t1 > t0)) { t1 = t0 + 1; }
    ctx.strokeStyle = "#ccc";
    ctx.strokeRect(0.5, 0.5, w - 1, h - 1);
    ctx.fillStyle = "#555";
    ctx.font = "11px sans-serif";
    ctx.fillText(String(Math.round(maxV * 100) / 100), 4, 12);
    series.forEach(function (s, i) {
      ctx.strokeStyle = colors[i];
      ctx.beginPath();
      s.forEach(function (p, j) {
        var x = (p[0] - t0) / (t1 - t0) * (w - 8) + 4;
        var y = h - 4 - p[1] / maxV * (h - 20);
        if (j === 0) { ctx.moveTo(x, y); } else { ctx.lineTo(x, y); }
      });
      ctx.stroke();
    });
  }

  function poll(url, onData) {
    var timer = null;
    function tick() {
      timer = null;
      if (document.hidden) { return; }
      fetch(url, { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(onData)
        .catch(function () {})
        .then(function () { if (!document.hidden && timer === null) { timer = setTimeout(tick, PERIOD); } });
    }
    document.addEventListener("visibilitychange", function () {
      if (!document.hidden && timer === null) { tick(); }
    });
    tick();
  }

  function setText(id, v) {
    var el = document.getElementById(id);
    if (el) { el.textContent = v; }
  }

  var lag = document.getElementById("lag-total");
  if (lag && lag.dataset.src) {
    var lagChart = document.getElementById("lag-chart");
    poll(lag.dataset.src, function (d) {
      if (d.error) { return; }
      lag.textContent = String(d.total);
      setText("consume-tps", d.consumeTps.toFixed(2));
      (d.queues || []).forEach(function (q) {
        var row = document.querySelector('#group-queues tr[data-queue="' + CSS.escape(q.key) + '"]');
        if (!row) { return; }
        row.querySelector(".broker-offset").textContent = q.brokerOffset;
        row.querySelector(".consumer-offset").textContent = q.consumerOffset;
        row.querySelector(".lag").textContent = q.lag;
      });
      if (lagChart) { draw(lagChart, [d.history || []], ["#c0392b"]); }
    });
  }

  var tps = document.getElementById("tps-chart");
  if (tps && tps.dataset.src) {
    poll(tps.dataset.src, function (d) {
      if (d.error) { return; }
      setText("put-tps", d.putTps.toFixed(2));
      setText("get-tps", d.getTps.toFixed(2));
      var h = d.history || [];
      draw(tps, [
        h.map(function (p) { return [p[0], p[1] / 100]; }),
        h.map(function (p) { return [p[0], p[2] / 100]; })
      ], ["#2471a3", "#239b56"]);
    });
  }

  var fmt = document.getElementById("body-format");
  var body = document.getElementById("body");
  if (fmt && body) {
    fmt.addEventListener("change", function () {
      body.textContent = body.dataset[fmt.value] || "";
    });
  }

  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (!window.confirm(f.dataset.confirm)) { e.preventDefault(); }
    });
  });
})();
