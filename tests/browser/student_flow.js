// A student's session in JupyterLab, in Debian's Chromium driven by playwright-core.
//
//     node student_flow.js CONFIG.json
//
// For each notebook of the configuration it does what a student does: open the
// notebook (noting whether it opens marked as modified), Kernel > Restart Kernel and Run All Cells, wait until the kernel has
// run every queued cell, save, and (when asked) press nbgrader's Validate button.
// It writes what the page shows (each cell's prompt and rendered outputs, the
// Validate dialog's text) to the configuration's `out` file as JSON; the pytest
// side (test_student_flow.py) judges it. It never downloads a browser: it runs
// the Chromium at `config.chromium` with a fresh profile.
//
// CONFIG: {url, token, chromium, profile, out, shots (folder or null),
//          notebooks: [{path, validate, runTimeoutMs, reruns: [cell index, ...]}]}
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

// The machine's network is closed: without these, Chromium's background
// services open connections that are refused, and it may stall on them.
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Poll a page expression until it is true, or fail after `timeoutMs`. */
async function until(page, what, expression, timeoutMs) {
  try {
    await page.waitForFunction(expression, null, { timeout: timeoutMs, polling: 250 });
  } catch (error) {
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

// Page expressions. A code cell's prompt reads "[3]:" once run, "[*]:" while
// queued or running, "[ ]:" before; the toolbar's indicator shows the kernel.
const PROMPTS = "[...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]";
const ANY_RUNNING = `${PROMPTS}.some((p) => p.textContent.includes('*'))`;
const KERNEL_IDLE = "document.querySelector('.jp-Notebook-ExecutionIndicator')"
  + "?.getAttribute('data-status') === 'idle'";
const cellPrompt = (index) => `document.querySelectorAll('.jp-Notebook .jp-Cell')[${index}]`
  + ".querySelector('.jp-InputPrompt').textContent";

/** The state the server knows for the kernel of the notebook at `notebookPath` ("" when none). */
async function serverKernelState(config, notebookPath) {
  const reply = await fetch(`${config.url}api/sessions?token=${config.token}`);
  const sessions = await reply.json();
  const session = sessions.find((s) => s.path === notebookPath);
  return session && session.kernel ? session.kernel.execution_state : '';
}

/** Poll the server until the notebook's kernel has started and is idle. */
async function kernelReady(config, notebookPath, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await serverKernelState(config, notebookPath) === 'idle') return;
    if (Date.now() > deadline) throw new Error(`the kernel of ${notebookPath} did not start in ${timeoutMs} ms`);
    await new Promise((resolve) => { setTimeout(resolve, 250); });  // the polling interval
  }
}

async function openNotebook(page, config, notebook) {
  const url = `${config.url}lab/tree/${notebook.path}?reset&token=${config.token}`;
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.locator('.jp-Notebook .jp-Cell').first().waitFor({ timeout: 90000 });
  await kernelReady(config, notebook.path, 90000);
  await until(page, 'the page to see the kernel idle', KERNEL_IDLE, 30000);
}

async function clickMenu(page, menu, item) {
  await page.locator('#jp-MainMenu .lm-MenuBar-itemLabel', { hasText: new RegExp(`^${menu}$`) }).click();
  await page.locator('.lm-Menu-itemLabel', { hasText: item }).first().click();
}

/** Kernel > Restart Kernel and Run All Cells, confirmed; returns when no cell is queued. */
async function restartAndRunAll(page, timeoutMs) {
  await clickMenu(page, 'Kernel', 'Restart Kernel and Run All Cells');
  await page.locator('.jp-Dialog .jp-mod-accept').click();
  await until(page, 'Run All to queue the cells', ANY_RUNNING, 30000);
  await until(page, 'every queued cell to finish', `!(${ANY_RUNNING}) && ${KERNEL_IDLE}`, timeoutMs);
}

/** Run one code cell again, as Shift+Enter does, and wait until it finished. */
async function rerunCell(page, index, timeoutMs) {
  const cell = page.locator('.jp-Notebook .jp-Cell').nth(index);
  await cell.scrollIntoViewIfNeeded();
  await cell.locator('.jp-InputPrompt').click();
  const before = JSON.stringify(await page.evaluate(cellPrompt(index)));
  await page.keyboard.press('Shift+Enter');
  const prompt = cellPrompt(index);
  await until(page, `cell ${index} to run again`,
    `${prompt} !== ${before} && !${prompt}.includes('*') && ${KERNEL_IDLE}`, timeoutMs);
  return cell;
}

async function save(page) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+s');
  await until(page, 'the notebook to be saved',
    "document.querySelector('.lm-TabBar-tab.jp-mod-dirty') === null", 30000);
}

/** Every cell as the page shows it: kind, prompt and each output's MIME type and text. */
async function readCells(page) {
  return page.$$eval('.jp-Notebook .jp-Cell', (cells) => cells.map((cell) => ({
    kind: cell.classList.contains('jp-CodeCell') ? 'code' : 'markdown',
    prompt: (cell.querySelector('.jp-InputPrompt') || { textContent: '' }).textContent.trim(),
    outputs: [...cell.querySelectorAll('.jp-OutputArea-output')].map((out) => ({
      mime: out.getAttribute('data-mime-type') || '',
      text: out.innerText,
    })),
  })));
}

/** Press nbgrader's Validate button; the result dialog's text. */
async function validate(page, shot) {
  await page.locator('.validate-button').first().click();
  const message = page.locator('#validation-message');
  await message.waitFor({ timeout: 180000 });
  const text = await message.innerText();
  // scroll the dialog to the end of the first failure, its assertion's message, as a student would
  await page.$eval('#validation-message', (box) => {
    const body = box.closest('.jp-Dialog-body');
    const failure = [...box.querySelectorAll('pre')].find((pre) => pre.innerText.includes('Error'));
    if (body && failure) {
      const bottom = failure.getBoundingClientRect().bottom - body.getBoundingClientRect().top;
      body.scrollTop += bottom - body.clientHeight + 8;
    }
  });
  if (shot) await page.screenshot({ path: shot });
  await page.locator('.jp-Dialog .jp-mod-accept').click();
  return text;
}

function shotPath(config, notebook, what) {
  if (!config.shots) return null;
  const stem = notebook.path.replace(/[\\/]/g, '-').replace(/\.ipynb$/, '');
  return path.join(config.shots, `${stem}-${what}.png`);
}

/** Whether the notebook's tab is marked modified (JupyterLab rewrote its metadata on opening it): the
 *  mark comes with the kernel's language_info, so it is given two seconds after the kernel is idle. */
async function modifiedOnOpen(page) {
  return page.locator('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty').waitFor({ timeout: 2000 })
    .then(() => true, () => false);
}

async function studentSession(page, config, notebook) {
  const started = Date.now();
  await openNotebook(page, config, notebook);
  const modified = await modifiedOnOpen(page);
  await restartAndRunAll(page, notebook.runTimeoutMs || 120000);
  const reruns = [];
  for (const index of notebook.reruns || []) {
    const cell = await rerunCell(page, index, 60000);
    reruns.push(await cell.locator('.jp-OutputArea').innerText());
    const shot = shotPath(config, notebook, `cell${index}-run${reruns.length}`);
    if (shot) await cell.locator('.jp-OutputArea').screenshot({ path: shot });
  }
  await save(page);
  const cells = await readCells(page);
  const shot = shotPath(config, notebook, 'end');
  if (shot) await page.screenshot({ path: shot });
  const validation = notebook.validate ? await validate(page, shotPath(config, notebook, 'validate')) : null;
  return { path: notebook.path, modifiedOnOpen: modified, cells, reruns, validation,
    seconds: (Date.now() - started) / 1000 };
}

async function main() {
  const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const context = await chromium.launchPersistentContext(config.profile, {
    executablePath: config.chromium,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  const results = [];
  try {
    const page = context.pages()[0] || await context.newPage();
    for (const notebook of config.notebooks) {
      results.push(await studentSession(page, config, notebook));
    }
  } finally {
    fs.writeFileSync(config.out, JSON.stringify({ notebooks: results }, null, 1));
    await context.close();
  }
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
