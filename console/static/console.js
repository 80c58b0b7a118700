// The console's live parts (docs/console.md). An answer whose run is in flight carries
// data-stream (its run's events, the admin API's SSE) and data-refresh (the answer rendered
// alone): each event re-renders the answer from the server, one request at a time, until the
// run ends. Polled parts (data-poll) skip a refresh while a form in them is being filled in.
(function () {
  "use strict";

  var followed = {}; // answer element id -> {source, busy, again, ended, reopen}
  var refocus = null; // the id of the control that had the focus in a part being re-rendered

  function typingIn(element) {
    var active = document.activeElement;
    return element.contains(active) && active.matches("input, textarea, select") &&
      (active.value !== "" || active.matches("select"));
  }

  function refresh(id) {
    var run = followed[id];
    var element = document.getElementById(id);
    if (!run || !element) { return; }
    if (run.busy) { run.again = true; return; }
    if (typingIn(element)) {
      run.again = true;
      document.activeElement.addEventListener("blur", function () { refresh(id); }, { once: true });
      return;
    }
    run.busy = true;
    run.again = false;
    htmx.ajax("GET", element.dataset.refresh, { target: "#" + id, swap: "outerHTML" }).then(function () {
      run.busy = false;
      var now = document.getElementById(id);
      if (now && !now.dataset.stream) { stop(id); return; } // the run ended: its answer is final
      if (run.again) { refresh(id); return; }
      if (run.reopen) { // its stream dropped while it still runs: follow it again shortly
        delete followed[id];
        window.setTimeout(function () {
          var later = document.getElementById(id);
          if (later) { follow(later); }
        }, 1000);
      }
    }, function () { run.busy = false; });
  }

  function stop(id) {
    var run = followed[id];
    if (!run) { return; }
    run.source.close();
    delete followed[id];
    var element = document.getElementById(id);
    if (element) { element.dispatchEvent(new CustomEvent("console:ended", { bubbles: true })); }
  }

  function follow(element) {
    var id = element.id;
    if (!element.dataset.stream || followed[id]) { return; }
    var source = new EventSource(element.dataset.stream);
    var run = { source: source, busy: false, again: false, ended: false, reopen: false };
    followed[id] = run;
    // A run's `error` event and the stream's own failure share the name "error": the first is
    // a MessageEvent with the run's data, the second a plain Event.
    (element.dataset.kinds || "").split(" ").forEach(function (kind) {
      source.addEventListener(kind, function (event) {
        if (!(event instanceof MessageEvent)) { return; }
        if (kind === "done" || kind === "error") { run.ended = true; source.close(); }
        refresh(id);
      });
    });
    // The stream ended without done or error (a run stopped while queued), or dropped: read
    // the answer once; if it is still in flight, follow it again.
    source.addEventListener("error", function (event) {
      if (event instanceof MessageEvent || run.ended) { return; }
      run.ended = true;
      run.reopen = true;
      source.close();
      refresh(id);
    });
  }

  function followAll(root) {
    var found = root.querySelectorAll ? root.querySelectorAll("[data-stream]") : [];
    if (root.dataset && root.dataset.stream) { follow(root); }
    Array.prototype.forEach.call(found, follow);
  }

  document.addEventListener("DOMContentLoaded", function () {
    followAll(document);
    // A re-rendered part keeps the focus where it was (its controls have stable ids), so a
    // keyboard user on an answer's Stop button is not thrown back to the top of the page.
    document.body.addEventListener("htmx:beforeSwap", function (event) {
      var active = document.activeElement;
      refocus = event.detail.target.contains(active) && active !== document.body ? active.id || null : null;
    });
    document.body.addEventListener("htmx:afterSwap", function () {
      var control = refocus && document.getElementById(refocus);
      refocus = null;
      if (control && document.activeElement !== control) { control.focus(); }
    });
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      var element = event.detail.elt;
      if (element.hasAttribute("data-poll") && typingIn(element)) { event.preventDefault(); }
    });
    htmx.onLoad(function (content) {
      followAll(content); // a re-rendered answer keeps its stream (followed by its id)
    });
    // A title double-clicked opens its Rename form, its text selected (as the seeds' sidebar).
    document.body.addEventListener("dblclick", function (event) {
      var title = event.target.closest && event.target.closest("[data-rename]");
      var form = title && document.getElementById(title.dataset.rename);
      if (!form) { return; }
      form.open = true;
      var input = form.querySelector("input[name=title]");
      input.focus();
      input.select();
    });
  });
}());
