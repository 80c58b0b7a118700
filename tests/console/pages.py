"""What the browser tests do on every page: keep a screenshot, check its forms can be used from
the keyboard (every field labelled, every button named, every form with a submit button, so
Enter submits it), and sign in."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from tests.console.conftest import TOKEN

# Problems of a page's forms, as a person with a keyboard or a screen reader meets them.
FORM_PROBLEMS = """() => {
  const problems = [];
  const named = (el) => (el.getAttribute('aria-label') || el.textContent || '').trim() ||
    (el.getAttribute('aria-labelledby') && document.getElementById(el.getAttribute('aria-labelledby')));
  for (const field of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    if (!(field.labels && field.labels.length) && !field.getAttribute('aria-label'))
      problems.push('unlabelled field ' + (field.name || field.id));
  }
  for (const button of document.querySelectorAll('button, a.button')) {
    if (!named(button)) problems.push('unnamed button in ' + button.closest('form, div, nav')?.className);
  }
  for (const form of document.querySelectorAll('form')) {
    if (!form.querySelector('button:not([type=button]), input[type=submit]'))
      problems.push('form without a submit button: ' + form.getAttribute('action'));
  }
  return problems;
}"""


async def shot(page: Page, shots: Path, name: str) -> None:
    """Keep the whole page as `<name>.png`, after checking its forms."""
    assert await page.evaluate(FORM_PROBLEMS) == [], page.url
    # caret="initial": hiding the caret would add an inline style, which the page's policy refuses
    await page.screenshot(path=str(shots / f"{name}.png"), full_page=True, caret="initial")


async def painted(page: Page) -> None:
    """Wait until the page has loaded and drawn two frames. A key pressed on a page whose DOM
    is read but not yet drawn (just after a form's navigation, on a busy machine) may be lost:
    Chromium can drop input sent to a new document before its first paint."""
    await page.wait_for_load_state("load")
    await page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


async def sign_in(page: Page, url: str, then: str = "/console/conversations") -> None:
    """Sign in from the keyboard: the token field has the focus, Enter submits."""
    await page.goto(f"{url}{then}")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await expect(page.get_by_label("Admin token")).to_be_focused()
    await page.keyboard.type(TOKEN)
    await page.keyboard.press("Enter")
    await page.wait_for_url(f"{url}{then}")
