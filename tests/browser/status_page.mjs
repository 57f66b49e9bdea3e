// Drives Debian's chromium (headless, through puppeteer-core) over reverifyd's HTML pages and
// checks what an operator must see, and runs axe-core on each page (no serious or critical
// violation allowed). Then every page again on every screen: 390 px (a phone) and 1280 px, in
// the light and the dark colour scheme: no horizontal scroll, no table scrolled or clipped
// inside its box, the charts' axes drawn, axe clean (no serious or critical violation, and no
// colour-contrast node it could not judge, which is what clipped or overflowing text gives).
// Called by status_page_browser.sh with the daemon set up as it describes:
//   node status_page.mjs URL OUT_DIR
// Writes OUT_DIR/status.png (and status.webp), OUT_DIR/version.png, OUT_DIR/verification.png,
// and OUT_DIR/<page>-<width>-<scheme>.png for every page and screen.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const [url, outDir] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const failures = [];
function check(condition, what) {
  if (condition) {
    console.log(`ok: ${what}`);
  } else {
    console.log(`FAIL: ${what}`);
    failures.push(what);
  }
}

async function json(path) {
  const response = await fetch(url + path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

// axe-core on the loaded page: no serious or critical violation, and no colour-contrast node
// axe had to leave for review ("incomplete": text clipped by or overflowing its box, partly
// hidden, over another element), since each is contrast nobody checked.
async function accessibility(page, name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "best-practice"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of result.violations) {
    console.log(`axe ${name}: ${v.impact} ${v.id}: ${v.help} (${v.nodes.length} node(s): ` +
      v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ") + ")");
  }
  check(bad.length === 0, `${name}: axe finds no serious or critical violation`);
  // axe never judges text inside an <svg> (every such node is "imgNode", or "shortTextContent"
  // for a one-character tick): the charts' labels are checked below, from their computed
  // colours, instead.
  const why = (node) => node.any.map((a) => a.data?.messageKey ?? a.message).join(", ");
  const review = result.incomplete.filter((r) => r.id === "color-contrast").flatMap((r) => r.nodes)
    .filter((node) => !node.html.startsWith("<text"));
  for (const node of review.slice(0, 5))
    console.log(`axe ${name}: colour contrast left for review: ${node.target.join(" ")} (${why(node)})`);
  check(review.length === 0,
    `${name}: axe leaves no colour-contrast node for review (${review.length} found)`);
  const charts = await page.evaluate(() => {
    // WCAG 2 relative luminance and contrast ratio of two computed "rgb(r, g, b)" colours.
    const luminance = (css) => {
      const [r, g, b] = css.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((c) => {
        const v = c / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const ratio = (a, b) => {
      const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (l1 + 0.05) / (l2 + 0.05);
    };
    const background = getComputedStyle(document.body).backgroundColor;
    return [...document.querySelectorAll("svg text")].map((t) => ratio(getComputedStyle(t).fill, background));
  });
  if (charts.length) {
    check(charts.every((r) => r >= 4.5),
      `${name}: every chart label has contrast >= 4.5 (lowest ${Math.min(...charts).toFixed(2)})`);
  }
}

// The page fits its screen: nothing scrolls sideways, and no table region scrolls or clips
// inside its box.
async function fits(page, name) {
  const layout = await page.evaluate(() => ({
    scrollWidth: document.scrollingElement.scrollWidth,
    innerWidth: window.innerWidth,
    // (A card layout's column headings are visually hidden, in a 1 px box, on purpose.)
    overflowing: [...document.querySelectorAll(".wrap, td, th")]
      .filter((e) => !(e.closest("thead") && e.closest("thead").clientWidth <= 1))
      .filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}.${e.className} ` +
        `(${e.scrollWidth} > ${e.clientWidth})`),
  }));
  check(layout.scrollWidth <= layout.innerWidth,
    `${name}: no horizontal scroll (${layout.scrollWidth} <= ${layout.innerWidth})`);
  check(layout.overflowing.length === 0,
    `${name}: no table or cell clipped or scrolled inside its box` +
      (layout.overflowing.length ? ` (${layout.overflowing.slice(0, 4).join("; ")})` : ""));
}

// The basics every page must have: lang, <main>, a viewport, one <h1>, no scripts, and a link
// that makes it reload itself (opt-in: an automatic refresh fails WCAG 2.2.1, axe "meta-refresh").
async function basics(page, name) {
  const facts = await page.evaluate(() => ({
    lang: document.documentElement.lang,
    main: document.querySelectorAll("main").length,
    viewport: !!document.querySelector('meta[name="viewport"]'),
    refresh: document.querySelector('meta[http-equiv="refresh"]')?.content ?? "",
    reload: [...document.querySelectorAll("footer a")].some((a) => a.search === "?refresh=30"),
    h1: document.querySelectorAll("h1").length,
    scripts: document.querySelectorAll("script").length,
  }));
  check(facts.lang === "en", `${name}: <html lang="en">`);
  check(facts.main === 1, `${name}: one <main>`);
  check(facts.viewport, `${name}: a viewport meta`);
  check(facts.refresh === "" && facts.reload, `${name}: reloads only when asked (a ?refresh=30 link)`);
  check(facts.h1 === 1, `${name}: one <h1>`);
  check(facts.scripts === 0, `${name}: no scripts`);
}

const browser = await puppeteer.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
  headless: true,
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });

  // --- the status page ---
  await page.goto(url + "/", { waitUntil: "load" });
  await basics(page, "status page");
  const rows = await page.$$eval("#attention tbody tr", (trs) =>
    trs.map((tr) => ({
      version: tr.dataset.version,
      attention: tr.dataset.attention,
      text: tr.innerText,
    })));
  console.log("attention rows:", rows.map((r) => `${r.version} (${r.attention})`).join(", "));
  const order = rows.map((r) => r.version);
  check(order[0] === "digits-mlp@2026.11.3" && rows[0].attention === "failed",
    "the gate-blocking failure comes first");
  check(rows[0].text.includes("failed:input-drift"), "its row names failed:input-drift");
  check(order.indexOf("digits-mlp@2026.10.2") === 1 && rows[1].attention === "error",
    "the version the system cannot verify comes next (error:provision, retry queued)");
  check(rows[1].text.includes("error:provision") && rows[1].text.includes("queued"),
    "its row shows the error and the queued retry");
  check(order.indexOf("digits-mlp@2026.10.1") === 2 && rows[2].attention === "uncalibrated",
    "then the uncalibrated version");
  const passed = rows.find((r) => r.version === "digits-mlp@2026.11.1");
  check(passed && passed.attention === "fresh-with-error" && order.indexOf(passed.version) === 3,
    "the verified version whose newest attempt errored comes last");
  check(passed && /passed/.test(passed.text) && passed.text.includes("error:provision"),
    "its row shows the pass the gate goes by and the newer error beside it");
  const queued = await page.$$eval("#queued tbody tr", (trs) => trs.map((tr) => tr.innerText));
  check(queued.some((t) => t.includes("digits-mlp@2026.10.2") && t.includes("retry")),
    "Next: the queued retry of digits-mlp@2026.10.2, with why");
  const toJson = await page.$$eval("main a", (as) => as.map((a) => a.getAttribute("href")));
  check(toJson.includes("/v1/models"), "the page links its JSON (/v1/models)");
  check(!toJson.some((h) => h.startsWith("/v1/verifications/")),
    "verification links open pages, not raw JSON");
  await page.screenshot({ path: `${outDir}/status.png`, fullPage: true });
  // A small copy for docs/operating.md "The status page" (docs/status-page.webp is one of these).
  await page.screenshot({ path: `${outDir}/status.webp`, type: "webp", quality: 70, fullPage: true });
  await accessibility(page, "status page");

  // Asked to reload itself, a page carries the meta refresh (and a link to stop).
  await page.goto(url + "/?refresh=30", { waitUntil: "load" });
  const refresh = await page.$eval('meta[http-equiv="refresh"]', (m) => m.content);
  check(refresh === "30; url=/?refresh=30", `/?refresh=30 reloads itself (${refresh})`);

  // Without JavaScript, the same order.
  await page.setJavaScriptEnabled(false);
  await page.goto(url + "/", { waitUntil: "load" });
  const text = await page.evaluate(() => document.body.innerText);
  const at = (s) => text.indexOf(s);
  check(at("digits-mlp@2026.11.3") >= 0 && at("digits-mlp@2026.11.3") < at("digits-mlp@2026.10.2") &&
    at("digits-mlp@2026.10.2") < at("digits-mlp@2026.10.1"),
    "without JavaScript: the same order in the page's text");
  await page.setJavaScriptEnabled(true);

  // --- a version page: the checks drawn against their bands, with the stored values ---
  await page.goto(url + "/", { waitUntil: "load" });
  await Promise.all([page.waitForNavigation(), page.click('a[href="/models/digits-mlp/2026.11.1"]')]);
  check(page.url().endsWith("/models/digits-mlp/2026.11.1"), "the status page links the version page");
  await basics(page, "version page");
  const gate = await page.$eval("#gate", (p) => ({ gate: p.dataset.gate, text: p.innerText }));
  check(gate.gate === "fresh", "version page: the gate is satisfied (an error does not count)");
  check(await page.$("#newer-error") !== null, "version page: the newer error is shown beside it");
  const version = await json("/v1/models/digits-mlp/versions/2026.11.1");
  const passId = version.last_conclusive_verdict.id;
  const verification = await json(`/v1/verifications/${passId}`);
  const primary = verification.verdict.checks.find((c) => c.kind === "primary");
  const chart = await page.$eval(`tr[data-check="${primary.name}"] svg.band`, (svg) => {
    const rect = svg.querySelector("rect.band-area").getBBox();
    const dot = svg.querySelector("circle.observed");
    return {
      observed: Number(svg.dataset.observed), lower: Number(svg.dataset.lower),
      upper: Number(svg.dataset.upper), inside: svg.dataset.inside,
      dotX: Number(dot.getAttribute("cx")), bandFrom: rect.x, bandTo: rect.x + rect.width,
      margin: Number(svg.querySelector("line.margin").dataset.margin),
      label: svg.getAttribute("aria-label"),
    };
  });
  console.log("primary chart:", JSON.stringify(chart));
  check(chart.observed === primary.observed, `the chart plots the stored observed value (${primary.observed})`);
  // The stored check's own band when the verdict engine wrote one, else reference ± tolerance.
  const band = primary.band ?? { lower: primary.reference - primary.tolerance,
                                 upper: primary.reference + primary.tolerance };
  check(Math.abs(chart.lower - band.lower) < 1e-12 && Math.abs(chart.upper - band.upper) < 1e-12,
    `the chart's band is the stored band [${band.lower}, ${band.upper}]`);
  check(chart.inside === "true" && chart.dotX >= chart.bandFrom && chart.dotX <= chart.bandTo,
    "a passing value is drawn inside the band");
  check(chart.label.includes(primary.name), "the chart has a text alternative naming the check");
  check(Math.abs(chart.margin - primary.margin) < 1e-9,
    `the chart's margin bar is the stored margin (${primary.margin})`);
  const trend = await page.$eval("svg.trend", (svg) => svg.dataset.values.split(" ").map(Number));
  check(trend.length >= 1 && trend.includes(primary.observed), "the primary metric's trend is drawn");
  await page.screenshot({ path: `${outDir}/version.png`, fullPage: true });
  await accessibility(page, "version page");

  // --- the failed verification's page, reached from the status page ---
  await page.goto(url + "/", { waitUntil: "load" });
  const failedHref = await page.$eval('#attention tr[data-version="digits-mlp@2026.11.3"] a[href^="/verifications/"]',
    (a) => a.getAttribute("href"));
  await page.goto(url + failedHref, { waitUntil: "load" });
  await basics(page, "verification page");
  const body = await page.evaluate(() => document.querySelector("main").innerText);
  check(body.includes("failed:input-drift") && body.includes("digits-mlp@2026.11.3"),
    "the verification page names its verdict and version");
  const jsonLink = await page.$eval('main a[href^="/v1/verifications/"]', (a) => a.getAttribute("href"));
  check(jsonLink === failedHref.replace("/verifications/", "/v1/verifications/"),
    "the verification page links its JSON");
  await page.screenshot({ path: `${outDir}/verification.png`, fullPage: true });
  await accessibility(page, "verification page");

  await page.goto(url + "/models", { waitUntil: "load" });
  await basics(page, "versions page");
  await accessibility(page, "versions page");

  // --- every page on every screen: a phone and a laptop, light and dark ---
  const pages = [["status", "/"], ["versions", "/models"],
    ["version", "/models/digits-mlp/2026.11.1"], ["verification", failedHref],
    ["verifications", "/verifications"]];
  // A phone and a laptop in both schemes, and the width right above where the tables stop
  // being cards (1100 px): the narrowest they must fit as tables.
  const screens = [[390, "light"], [390, "dark"], [1101, "light"], [1280, "light"],
    [1280, "dark"]];
  for (const [width, scheme] of screens) {
    {
      await page.setViewport({ width, height: 900 });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
      for (const [name, path] of pages) {
        const what = `${name} page at ${width} px, ${scheme}`;
        await page.goto(url + path, { waitUntil: "load" });
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        const channels = background.match(/\d+/g).slice(0, 3).map(Number);
        const light = channels.reduce((a, b) => a + b, 0) > 3 * 128;
        check(light === (scheme === "light"), `${what}: a ${scheme} background (${background})`);
        await fits(page, what);
        if (width === 390) {
          const cards = await page.$$eval("table.cards tbody tr", (trs) =>
            trs.map((tr) => getComputedStyle(tr).display));
          check(cards.length > 0 && cards.every((d) => d === "block"),
            `${what}: every table row is a card (${cards.length} rows)`);
        }
        if (name === "version") {
          const axis = await page.$$eval("svg.band", (svgs) => svgs.map((svg) => ({
            ticks: svg.querySelectorAll("text.tick").length,
            unit: svg.querySelector("text.unit")?.textContent ?? "",
            width: svg.getBoundingClientRect().width,
          })));
          check(axis.length > 0 && axis.every((a) => a.ticks >= 2 && a.unit !== "" && a.width >= 150),
            `${what}: every band chart has an axis with ticks and its unit, at least 150 px wide`);
          const dates = await page.$$eval("svg.trend text.date", (ts) => ts.map((t) => t.textContent));
          check(dates.length >= 1 && dates.every((d) => /^\d{4}-\d{2}-\d{2}$|^\d{2}-\d{2} \d{2}:\d{2}$/.test(d)),
            `${what}: the trend chart's points carry their dates (${dates.join(", ")})`);
          const why = await page.$$eval("#checks td.why", (tds) =>
            tds.map((td) => td.getBoundingClientRect()).map((r) => ({ right: r.right, width: r.width })));
          const inner = await page.evaluate(() => window.innerWidth);
          check(why.length > 0 && why.every((r) => r.right <= inner && r.width >= 150),
            `${what}: the checks' explanations are on screen and at least 150 px wide`);
        }
        await page.screenshot({ path: `${outDir}/${name}-${width}-${scheme}.png`, fullPage: true });
        await accessibility(page, what);
      }
    }
  }
  // Without JavaScript, the phone layout holds too (it is CSS only).
  await page.setJavaScriptEnabled(false);
  await page.setViewport({ width: 390, height: 900 });
  await page.goto(url + "/", { waitUntil: "load" });
  await fits(page, "status page at 390 px without JavaScript");
} finally {
  await browser.close();
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log("all status page checks passed");
