document.querySelectorAll('table.grid a[data-sort]').forEach(function (head) {
  head.addEventListener('click', function (event) {
    event.preventDefault();
    var key = head.getAttribute('data-sort');
    var body = head.closest('table').tBodies[0];
    var rank = function (row) {
      if (key === 'name') return 0;
      if (key === 'points') return -Number(row.getAttribute('data-points'));
      var cell = row.querySelector('td[data-claim="' + key + '"]');
      if (!cell) return 1;
      return cell.classList.contains('fail') ? 0 : cell.classList.contains('pass') ? 2 : 1;
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      return rank(a) - rank(b) || (a.getAttribute('data-submission') <
        b.getAttribute('data-submission') ? -1 : 1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    var note = document.getElementById('sorted');
    if (note) note.textContent = 'sorted by ' + (key === 'name' || key === 'points' ? key :
      'claim ' + key + ', its failures first');
  });
});
