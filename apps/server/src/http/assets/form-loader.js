/* global window, document, location, navigator, fetch, console, URLSearchParams */
/*
 * Leadwire form loader. Paste once per page:
 *   <div data-leadwire-form="FORM_ID"></div><script src="https://YOUR_HOST/api/embed/form-loader.js" async></script>
 * It fetches each form's embed, inserts it, re-creates its <script> elements (scripts inserted through innerHTML never
 * run) and adds the page's utm_* parameters, referrer and address as hidden attribution fields, and the tracking
 * snippet's visitor id (the lw_vid cookie, unless the visitor asked not to be tracked) so that the page views made
 * before the visitor was known join the contact. It never throws into the host page.
 */
(function () {
  var me = document.currentScript;
  var base = me && me.src ? me.src.replace(/\/embed\/form-loader\.js(\?.*)?$/, '') : '';
  function hidden(form, name, value) {
    if (!value || form.querySelector('input[name="' + name + '"]')) return;
    var input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }
  function attribute(form) {
    new URLSearchParams(location.search).forEach(function (value, key) {
      if (/^utm_[a-z0-9_]{1,40}$/i.test(key)) hidden(form, key, value);
    });
    hidden(form, '_referrer', document.referrer);
    hidden(form, '_landingPage', location.href);
    var optedOut = navigator.globalPrivacyControl === true || navigator.doNotTrack === '1';
    var visitor = /(?:^|;\s*)lw_vid=([\w-]{8,64})/.exec(document.cookie);
    if (visitor && !optedOut) hidden(form, '_visitor', visitor[1]);
  }
  function revive(old) {
    var script = document.createElement('script');
    for (var i = 0; i < old.attributes.length; i++) script.setAttribute(old.attributes[i].name, old.attributes[i].value);
    script.text = old.text;
    old.parentNode.replaceChild(script, old);
  }
  function load(el) {
    if (el.getAttribute('data-leadwire-loaded')) return;
    el.setAttribute('data-leadwire-loaded', 'true');
    fetch(base + '/forms/' + encodeURIComponent(el.getAttribute('data-leadwire-form')) + '/embed')
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(function (body) {
        el.innerHTML = body.html;
        Array.prototype.forEach.call(el.querySelectorAll('script'), revive);
        Array.prototype.forEach.call(el.querySelectorAll('form[data-leadwire-form]'), attribute);
      })
      .catch(function (err) {
        if (window.console) console.warn('Leadwire: the form could not be loaded', err);
      });
  }
  function run() {
    try {
      Array.prototype.forEach.call(document.querySelectorAll('[data-leadwire-form]:not(form)'), load);
    } catch (err) {
      if (window.console) console.warn('Leadwire:', err);
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
})();
