// A student's whole path on the course's JupyterHub, in Debian's Chromium driven by playwright-core.
//
//     node student_flow_hub.js CONFIG.json
//
// It logs into the hub as the student (the hub's login form), waits for their JupyterLab, opens nbgrader's
// Assignments tab (Nbgrader > Assignment List), fetches the assignment, opens its notebook, types an answer
// into one answer cell, saves, submits from the Assignments tab, refreshes the tab until the submission has
// feedback to fetch, fetches it and opens it, then loads the grading service's page (/services/<name>/).
// Each step is logged (what it saw, when) with a screenshot; the log and what the feedback and the
// service's page said go to `config.out` as JSON, for test_hub.py to judge. It never downloads a browser.
//
// CONFIG: {hub, user, password, chromium, profile, out, shots, notebook, cellIndex, answer, course,
//          assignment, service, feedbackTimeoutMs}
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

// As tests/browser/student_flow.js: the machine's network is closed; Chromium's background services would
// open connections that are refused, and it may stall on them.
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const started = Date.now();
const steps = [];
let shotCount = 0;

async function step(page, config, name, detail) {
  shotCount += 1;
  const shot = path.join(config.shots, `${String(shotCount).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: shot });
  const entry = { step: name, seconds: (Date.now() - started) / 1000, url: page.url(), detail, shot };
  steps.push(entry);
  console.log(`[${entry.seconds.toFixed(1)} s] ${name}: ${detail}`);
}

async function until(page, what, expression, timeoutMs) {
  try {
    await page.waitForFunction(expression, null, { timeout: timeoutMs, polling: 250 });
  } catch (error) {
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

async function openAssignmentList(page) {
  await page.locator('#jp-MainMenu .lm-MenuBar-itemLabel', { hasText: /^Nbgrader$/ }).click();
  await page.locator('.lm-Menu-itemLabel', { hasText: 'Assignment List' }).first().click();
  await page.locator('#released_assignments_list').waitFor({ timeout: 30000 });
  await until(page, 'the assignment lists to load',
    "[...document.querySelectorAll('.list_loading')].every((e) => e.hidden || e.offsetParent === null)", 60000);
}

const listText = (id) => `(document.getElementById('${id}')?.innerText || '')`;
// nbgrader's timestamps, as the Assignments tab lists each submission
const STAMP = '/\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d+ \\w+/g';
const stamps = (text) => text.match(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+/g) || [];
const lineOf = (text, stamp) => (text.split('\n').find((l) => l.includes(stamp)) || '').trim();

async function main() {
  const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  fs.mkdirSync(config.shots, { recursive: true });
  const userUrl = `${config.hub}/user/${config.user}`;
  const result = { steps, feedbackText: '', servicePage: '', submittedTimestamp: '', error: null };
  const context = await chromium.launchPersistentContext(config.profile, {
    executablePath: config.chromium, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] || await context.newPage();
  try {
    // 1. the hub's login form
    await page.goto(`${config.hub}/hub/login`, { waitUntil: 'domcontentloaded' });
    await page.locator('#username_input').fill(config.user);
    await page.locator('#password_input').fill(config.password);
    await step(page, config, 'login-form', `the hub's login page, as ${config.user}`);
    await page.locator('#login_submit').click();
    // the hub spawns the server (as the Unix user) and redirects to JupyterLab
    await page.waitForURL(new RegExp(`/user/${config.user}/lab`), { timeout: 180000 });
    await page.locator('#jp-main-dock-panel').waitFor({ timeout: 120000 });
    await page.locator('#jp-MainMenu').waitFor({ timeout: 60000 });
    await step(page, config, 'jupyterlab', 'JupyterLab of the student, served through the hub');

    // 2. nbgrader's Assignments tab: fetch
    await openAssignmentList(page);
    const released = page.locator('#released_assignments_list .list_item', { hasText: config.assignment });
    await released.first().waitFor({ timeout: 30000 });
    await step(page, config, 'assignments-tab', `released: ${(await released.first().innerText()).replace(/\s+/g, ' ')}`);
    await released.first().locator('button', { hasText: /^Fetch$/ }).click();
    const fetched = page.locator('#fetched_assignments_list .list_item', { hasText: config.assignment });
    await fetched.first().waitFor({ timeout: 60000 });
    await step(page, config, 'fetched', `fetched: ${(await fetched.first().innerText()).replace(/\s+/g, ' ')}`);

    // 3. the notebook: type an answer, save
    await page.goto(`${userUrl}/lab/tree/${config.assignment}/${config.notebook}`, { waitUntil: 'domcontentloaded' });
    const cell = page.locator('.jp-Notebook .jp-Cell').nth(config.cellIndex);
    await cell.waitFor({ timeout: 90000 });
    await cell.scrollIntoViewIfNeeded();
    const editor = cell.locator('.cm-content');
    await editor.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText(config.answer);
    await page.keyboard.press('Escape');
    await step(page, config, 'answer-typed', `cell ${config.cellIndex} of ${config.notebook}: ${config.answer.split('\n')[0]}`);
    await page.keyboard.press('Control+s');
    await until(page, 'the notebook to be saved',
      "document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty') === null", 30000);
    await step(page, config, 'saved', `${config.notebook} saved`);

    // 4. submit from the Assignments tab (earlier submissions of this student may be listed: the new one is
    //    the timestamp that was not there before)
    await openAssignmentList(page);
    const before = stamps(await page.evaluate(listText('submitted_assignments_list')));
    const toSubmit = page.locator('#fetched_assignments_list .list_item', { hasText: config.assignment }).first();
    await toSubmit.locator('button', { hasText: /^Submit$/ }).click();
    await until(page, 'the submission to be listed',
      `(${listText('submitted_assignments_list')}.match(${STAMP}) || []).length > ${before.length}`, 60000);
    const after = stamps(await page.evaluate(listText('submitted_assignments_list')));
    result.submittedTimestamp = after.find((stamp) => !before.includes(stamp));
    const line = async () => lineOf(await page.evaluate(listText('submitted_assignments_list')), result.submittedTimestamp);
    await step(page, config, 'submitted', `submitted: ${await line()} (${before.length} earlier submissions listed)`);

    // 5. the feedback, as soon as the service has written it: refresh the tab until it says so
    const deadline = Date.now() + config.feedbackTimeoutMs;
    for (;;) {
      if ((await line()).includes('feedback available to fetch')) break;
      if (Date.now() > deadline) throw new Error(`no feedback to fetch after ${config.feedbackTimeoutMs} ms: ${await line()}`);
      await new Promise((resolve) => { setTimeout(resolve, 1000); });  // the polling interval
      await page.locator('#refresh_assignments_list').click();
      await until(page, 'the lists to reload',
        "[...document.querySelectorAll('.list_loading')].every((e) => e.hidden || e.offsetParent === null)", 60000);
    }
    await step(page, config, 'feedback-available', await line());
    await page.locator('#submitted_assignments_list .list_item', { hasText: config.assignment })
      .locator('button', { hasText: /^Fetch Feedback$/ }).first().click();
    await until(page, 'the feedback to be fetched',
      `${listText('submitted_assignments_list')}.split('\\n').some((l) => l.includes(${JSON.stringify(result.submittedTimestamp)}) && l.includes('view feedback'))`,
      60000);
    await step(page, config, 'feedback-fetched', await line());

    // 6. open the feedback the student now has
    // nbgrader's fetch_feedback puts it in <assignment>/feedback/<the submission's timestamp>/
    const stem = config.notebook.replace(/\.ipynb$/, '');
    await page.goto(`${userUrl}/files/${config.assignment}/feedback/${encodeURIComponent(result.submittedTimestamp)}/${stem}.html`,
      { waitUntil: 'load' });
    result.feedbackText = await page.evaluate(() => document.body.innerText);
    await step(page, config, 'feedback-open', `feedback/${result.submittedTimestamp}/${stem}.html: ${result.feedbackText.slice(0, 160).replace(/\s+/g, ' ')}`);

    // 7. the service's own page, behind the hub's login
    await page.goto(`${config.hub}${config.service}`, { waitUntil: 'load' });
    await page.waitForURL(new RegExp(config.service.replace(/\//g, '\\/')), { timeout: 60000 });
    result.servicePage = await page.evaluate(() => document.body.innerText);
    await step(page, config, 'service-page', result.servicePage.slice(0, 200).replace(/\s+/g, ' '));
  } catch (error) {
    result.error = String(error.stack || error);
    try {
      await step(page, config, 'failed', String(error.message || error));
    } catch (ignored) {
      // the page may be gone: the log says what happened
    }
  } finally {
    fs.writeFileSync(config.out, JSON.stringify(result, null, 1));
    await context.close();
  }
  if (result.error) {
    console.error(result.error);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
