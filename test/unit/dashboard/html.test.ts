import { describe, expect, it } from 'vitest';
import { html, raw } from '../../../src/dashboard/html.js';

describe('html', () => {
  it('escapes interpolated text, so a hostile name stays text', () => {
    const name = `<img src=x onerror="alert('x')">&`;
    expect(html`<td>${name}</td>`.text).toBe('<td>&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</td>');
  });

  it('nests html results and joins arrays without escaping them twice', () => {
    const rows = ['a<b', 'c'].map((cell) => html`<li>${cell}</li>`);
    expect(html`<ul>${rows}</ul>`.text).toBe('<ul><li>a&lt;b</li><li>c</li></ul>');
  });

  it('drops null, undefined and false, and prints numbers', () => {
    expect(html`${null}${undefined}${false}${0}${12n}`.text).toBe('012');
  });

  it('passes raw markup through', () => {
    expect(html`<p>${raw('<b>x</b>')}</p>`.text).toBe('<p><b>x</b></p>');
  });
});
