// axe-core's accessibility checks of the reports, in Debian's Chromium driven by playwright-core.
//
//     node accessibility.js CONFIG.json
//
// For each page of the configuration (a file:// URL of a feedback page or a class report) it opens the
// page, runs axe-core (tests/browser/node_modules/axe-core, as pinned in package-lock.json) on the whole
// document, and writes each page's violations (rule, impact, help, the elements) to the configuration's
// `out` file as JSON; the pytest side (test_accessibility.py) judges them. It never downloads a browser:
// it runs the Chromium at `config.chromium` with a fresh profile.
//
// CONFIG: {chromium, profile, out, pages: [url, ...]}
'use strict';

const fs = require('fs');
const { chromium } = require('playwright-core');

const AXE = require.resolve('axe-core/axe.min.js');
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

async function check(page, url) {
  await page.goto(url, { waitUntil: 'load' });
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    // every rule axe runs by default (WCAG 2.x A and AA, and its best practices); the details open, so that
    // what they fold away is checked too
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    const results = await window.axe.run(document, { resultTypes: ['violations'] });
    return {
      version: window.axe.version,
      violations: results.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
      })),
    };
  });
  return { url, ...found };
}

async function main() {
  const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const context = await chromium.launchPersistentContext(config.profile, {
    executablePath: config.chromium, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 },
  });
  const results = [];
  try {
    const page = context.pages()[0] || await context.newPage();
    for (const url of config.pages) results.push(await check(page, url));
  } finally {
    fs.writeFileSync(config.out, JSON.stringify({ pages: results }, null, 1));
    await context.close();
  }
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
