// The console's live parts: the lag and TPS values and charts poll their
// JSON every 2 s while the page is visible, the body format switch, confirmations.
(function () {
  "use strict";
  var PERIOD = 2000;

  // The server draws the charts; a poll's JSON carries the new SVG.
  function draw(box, svg) {
    if (box && typeof svg === "string") { box.innerHTML = svg; }
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
      draw(lagChart, d.chart);
    });
  }

  var tps = document.getElementById("tps-chart");
  if (tps && tps.dataset.src) {
    poll(tps.dataset.src, function (d) {
      if (d.error) { return; }
      setText("put-tps", d.putTps.toFixed(2));
      setText("get-tps", d.getTps.toFixed(2));
      draw(tps, d.chart);
    });
  }

  var dash = document.getElementById("dash-tps-chart");
  if (dash && dash.dataset.src) {
    var top = document.getElementById("dash-top-chart");
    var table = document.querySelector("#top-topics tbody");
    poll(dash.dataset.src, function (d) {
      if (d.error) { return; }
      setText("dash-put-tps", d.putTps.toFixed(2));
      setText("dash-get-tps", d.getTps.toFixed(2));
      draw(dash, d.tpsChart);
      draw(top, d.topChart);
      if (table) {
        table.textContent = "";
        (d.top || []).forEach(function (t) {
          var tr = document.createElement("tr");
          tr.dataset.topic = t.topic;
          var a = document.createElement("a");
          a.href = "/topics/" + encodeURIComponent(t.topic);
          a.textContent = t.topic;
          var td1 = document.createElement("td"), td2 = document.createElement("td");
          td1.className = "topic"; td2.className = "messages";
          td1.appendChild(a); td2.textContent = String(t.messages);
          tr.appendChild(td1); tr.appendChild(td2);
          table.appendChild(tr);
        });
      }
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
