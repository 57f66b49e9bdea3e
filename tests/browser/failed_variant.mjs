// The page of the demo's failed variant as its owner first sees it, in Debian's headless chromium
// at 1280x800 (a laptop's screen): the cause leads, the failing check and its numbers are above
// the fold, no informational note is styled as a failure, the evidence (the tensors that differ)
// is on the page. Then every command the pages suggest is collected for the caller to run.
// Called by failed_variant_browser.sh with the daemon it describes:
//   node failed_variant.mjs URL OUT_DIR VERIFICATION_ID
// Writes OUT_DIR/failed-variant-1280x800.png (the first screen) and OUT_DIR/commands.txt (one
// suggested command a line, as printed).
import { writeFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const [url, outDir, id] = process.argv.slice(2);
const failures = [];
function check(condition, what) {
  console.log(`${condition ? "ok" : "FAIL"}: ${what}`);
  if (!condition) failures.push(what);
}

const browser = await puppeteer.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
  headless: true,
});
const commands = new Set();
// Commands as the page prints them: in backticks inside a text, or a whole <code> element.
async function collectCommands(page) {
  const found = await page.evaluate(() => {
    const out = [];
    for (const m of document.body.textContent.matchAll(/`(reverify [^`]+)`/g)) out.push(m[1]);
    for (const code of document.querySelectorAll("code")) {
      if (code.textContent.startsWith("reverify ")) out.push(code.textContent);
    }
    return out;
  });
  found.forEach((c) => commands.add(c));
}
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(`${url}/verifications/${id}`, { waitUntil: "load" });
  const verification = await (await fetch(`${url}/v1/verifications/${id}`)).json();
  const checks = verification.verdict.checks;

  const view = await page.evaluate(() => {
    const fold = window.innerHeight;
    const box = (el) => (el ? el.getBoundingClientRect() : null);
    const visible = (el) => !!el && box(el).top >= 0 && box(el).bottom <= fold && box(el).height > 0;
    const rows = [...document.querySelectorAll("#checks tbody tr")].map((tr) => ({
      name: tr.dataset.check,
      reading: tr.dataset.reading,
      tag: tr.querySelector("td .tag")?.className ?? "",
      tagText: tr.querySelector("td .tag")?.textContent ?? "",
      chart: tr.querySelector("svg.band circle.observed")?.getAttribute("class") ?? "",
      seen: visible(tr.querySelector("th")) && visible(tr.querySelector("td .tag")),
      numbersSeen: [...tr.querySelectorAll("td.num")].every((td) => visible(td)),
      why: tr.querySelector("td.why")?.innerText ?? "",
      whySeen: visible(tr.querySelector("td.why")),
    }));
    return {
      fold,
      headline: document.querySelector("#headline")?.innerText ?? "",
      headlineSeen: visible(document.querySelector("#headline")),
      counts: document.querySelector("#check-counts")?.innerText ?? "",
      rows,
      tensors: [...document.querySelectorAll("#evidence-h ~ ul li code")].map((c) => c.textContent),
    };
  });
  console.log("headline:", view.headline);
  console.log("counts:", view.counts);
  console.log("rows:", view.rows.map((r) => `${r.name} (${r.reading})`).join(", "));
  check(verification.verdict.class.startsWith("failed:"), `verification ${id} is a failure (${verification.verdict.class})`);
  check(view.headlineSeen, "the headline is on the first screen");
  const failed = view.rows.filter((r) => r.reading === "failure");
  check(failed.length > 0 && view.rows[0].reading === "failure", "the first row is a failing check");
  check(failed.every((r, i) => view.rows[i] === r), "every failing check comes before any other row");
  const first = failed[0];
  if (first) {
    check(first.seen && first.numbersSeen && first.whySeen,
      `the failing check ${first.name}, its numbers and its explanation are above the fold (${view.fold} px)`);
    const stored = checks.find((c) => c.name === first.name);
    check(stored && stored.outcome === "failed" && !stored.informational,
      `${first.name} is a deciding failure in the stored verdict`);
    check(/bad/.test(first.tag) && first.tagText === "failed", `${first.name} is tagged as a failure`);
    const subject = first.name.split(":").slice(1).join(":");
    check(first.name.startsWith("weights:") ? /weights differ/.test(view.headline) : view.headline.includes(subject.split(":").pop()),
      "the headline names the failing check's cause");
  }
  check(!/input moved|inputs moved/i.test(view.headline), "the headline says no input moved (every input passed)");
  check(!/`|[0-9a-f]{12}/.test(view.headline), "the headline has no Markdown and no hashes");
  const notes = view.rows.filter((r) => r.reading === "note");
  const storedNotes = checks.filter((c) => c.informational);
  check(notes.length === storedNotes.length && notes.length > 0,
    `every informational check is shown as a note (${notes.length} of ${storedNotes.length})`);
  check(notes.every((r) => /\bnote\b/.test(r.tag) && !/\bbad\b/.test(r.tag) && !/failed/.test(r.tagText)),
    "no note is styled or labelled as a failure");
  check(notes.every((r) => r.chart === "" || /\bnote\b/.test(r.chart)),
    `every note's band chart draws its value as a note, not in a failure's red (${notes.map((r) => r.chart)})`);
  const noteCount = storedNotes.length;
  check(view.counts.includes(`${failed.length} failed`) && view.counts.includes(`${noteCount} note`),
    `the counts keep failures and notes apart (${view.counts})`);
  if (first && first.name.startsWith("weights:")) {
    check(view.tensors.length > 0, `the tensors that differ are listed on the page (${view.tensors.join(", ")})`);
    check(!/reverify diff/.test(first.why), "the weights check does not send the owner to `reverify diff`");
  }
  await page.screenshot({ path: `${outDir}/failed-variant-1280x800.png` });
  await collectCommands(page);

  // The status page's cell for the variant: short, plain, the same headline.
  await page.goto(`${url}/`, { waitUntil: "load" });
  const cell = await page.$eval('#attention tr[data-version="digits-mlp@2026.11.2"] td.why',
    (td) => td.innerText);
  console.log("status cell:", cell);
  check(!/`|[0-9a-f]{12}/.test(cell), "the status cell has no Markdown backticks and no hashes");
  check(cell.split(/\s+/).length <= 45, `the status cell is short (${cell.split(/\s+/).length} words)`);
  await collectCommands(page);

  // Every other page the verdicts are on: each verification and each version.
  const recent = await (await fetch(`${url}/v1/verifications`)).json();
  for (const v of recent.verifications ?? recent) {
    await page.goto(`${url}/verifications/${v.id}`, { waitUntil: "load" });
    await collectCommands(page);
    await page.goto(`${url}/models/${v.model}/${v.version}`, { waitUntil: "load" });
    await collectCommands(page);
  }
} finally {
  await browser.close();
}
writeFileSync(`${outDir}/commands.txt`, [...commands].map((c) => c + "\n").join(""));
console.log(`${commands.size} suggested command(s) collected`);
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
