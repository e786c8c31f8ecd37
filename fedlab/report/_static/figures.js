/* A figure opens at its full size, over the page, when it is clicked (Escape or a click closes it). */
(function () {
  "use strict";
  function start() {
    const dialog = document.createElement("dialog");
    dialog.className = "figure-zoom";
    dialog.addEventListener("click", () => dialog.close());
    document.body.append(dialog);
    for (const img of document.querySelectorAll("article figure img, article .cell_output img")) {
      img.classList.add("zoomable");
      img.title = "Click to enlarge";
      img.addEventListener("click", () => {
        const big = img.cloneNode();
        big.classList.remove("zoomable");
        big.removeAttribute("width");
        big.removeAttribute("height");
        big.removeAttribute("style");
        dialog.replaceChildren(big);
        dialog.showModal();
      });
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
