// neardup's page: fetches HTML fragments from /web/... and puts them in place.
// The access token (when the server needs one) is asked once and kept in this tab's
// sessionStorage: sent as "Authorization: Bearer" on every fetch, forgotten when the tab
// closes, never stored in a cookie.
"use strict";

const TOKEN_KEY = "neardup-token";
const $ = (id) => document.getElementById(id);

class Refused extends Error {}

async function fragment(method, url, body) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    const had = sessionStorage.getItem(TOKEN_KEY) !== null;
    sessionStorage.removeItem(TOKEN_KEY);
    lock(had ? "The token was refused: it is not this server's token. Try again."
             : "");
    throw new Refused();
  }
  if (!response.ok) {
    let detail = response.statusText;
    try {
      const data = await response.json();
      detail = typeof data.detail === "string" ? data.detail
        : data.detail.map((d) => d.msg).join("; ");
    } catch (e) { /* not JSON: keep the status text */ }
    throw new Error(detail);
  }
  return response.text();
}

function lock(message) {
  $("app").hidden = true;
  $("pages").hidden = true;
  $("unlock").hidden = false;
  $("unlock-message").textContent = message;
  $("token").value = "";
  $("token").focus();
}

function unlocked() {
  $("unlock").hidden = true;
  $("pages").hidden = false;
  $("app").hidden = false;
}

async function show(where, method, url, body) {
  const target = $(where);
  target.setAttribute("aria-busy", "true");
  try {
    target.innerHTML = await fragment(method, url, body);
    return true;
  } catch (error) {
    if (!(error instanceof Refused)) {
      target.innerHTML = "";
      const p = document.createElement("p");
      p.className = "error";
      p.setAttribute("role", "alert");
      p.textContent = error.message;
      target.appendChild(p);
    }
    return false;
  } finally {
    target.removeAttribute("aria-busy");
  }
}

async function start() {
  if (await show("collection-result", "GET", "/web/collection")) {
    unlocked();
    route();
  }
}

function route() {
  const hash = location.hash;
  if (!hash.startsWith("#document/")) return;
  const id = decodeURIComponent(hash.slice("#document/".length));
  $("document").hidden = false;
  $("document-title").focus();
  show("document-result", "GET", "/web/documents/" + encodeURIComponent(id));
}

document.addEventListener("DOMContentLoaded", () => {
  $("unlock-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    start();
  });
  $("compare-form").addEventListener("submit", (event) => {
    event.preventDefault();
    show("compare-result", "POST", "/web/compare", { a: $("text-a").value, b: $("text-b").value });
  });
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    show("search-result", "POST", "/web/search", { text: $("search-text").value });
  });
  $("add-button").addEventListener("click", async () => {
    const id = $("add-id").value.trim();
    if (!id) {
      $("add-id").focus();
      $("add-id").setAttribute("aria-invalid", "true");
      return;
    }
    $("add-id").removeAttribute("aria-invalid");
    if (await show("search-result", "POST", "/web/add", { id, text: $("search-text").value })) {
      show("collection-result", "GET", "/web/collection");
    }
  });
  for (const input of document.querySelectorAll("input[type=file][data-into]")) {
    input.addEventListener("change", async () => {
      if (input.files.length) $(input.dataset.into).value = await input.files[0].text();
    });
  }
  for (const area of document.querySelectorAll("textarea")) {  // a file dropped on a text box
    area.addEventListener("dragover", (event) => event.preventDefault());
    area.addEventListener("drop", async (event) => {
      if (!event.dataTransfer.files.length) return;
      event.preventDefault();
      area.value = await event.dataTransfer.files[0].text();
    });
  }
  window.addEventListener("hashchange", route);
  start();
});
