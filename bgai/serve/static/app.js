// bgai web page: play a money game against the bot served by bgai's HTTP API: the cube (doubles, takes, drops;
// the bot's cube decisions come from /api/cube) and the Jacoby rule (gammons count only once the cube is turned).
// At your turn you may resign a single game, a gammon or a backgammon: /api/resign says whether the bot accepts.
// Boards are bgai's layout: [[25 counts of the side], [25 counts of the other side]], columns 0..23 = points
// 1..24 of that side, 24 = its bar.  The page keeps the board from YOUR view (row 0 = you); the bot's turn uses
// the flipped board.  Legal plays come from /api/plays; only those can be played.
// URL options (for tests and demos): ?seed=N (reproducible dice), ?autoplay=N (play N games by clicking the
// page's own buttons, choosing random legal plays), &stopafter=M (autoplay stops after M plays, mid-game),
// &resignafter=M&resign=P (autoplay offers to resign P points once, at your first turn after M plays).
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let seed = params.has("seed") ? (parseInt(params.get("seed"), 10) | 0) : null;

function rand() {
  if (seed === null) return Math.random();
  seed = (seed + 0x6d2b79f5) | 0; // mulberry32
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const die = () => 1 + Math.floor(rand() * 6);
const roll = () => [die(), die()].sort((x, y) => y - x); // higher die first, as usually written

function startRow() {
  const r = new Array(25).fill(0);
  r[23] = 2; r[12] = 5; r[7] = 3; r[5] = 5;
  return r;
}

const S = {
  board: [startRow(), startRow()],
  phase: "idle", // idle | busy | roll | move | doubled | over
  cube: { value: 1, owner: "centred" }, // owner: centred | you | bot
  dice: null,
  plays: [],
  score: { you: 0, bot: 0 },
  games: 0,
  moves: 0,
  agent: "?",
};

const flip = (b) => [b[1].slice(), b[0].slice()];
const off = (row) => 15 - row.reduce((a, c) => a + c, 0);

function wildbgQuery(b) {
  const q = new URLSearchParams();
  for (let p = 1; p <= 24; p++) {
    const v = b[0][p - 1] - b[1][24 - p];
    if (v) q.set("p" + p, String(v));
  }
  if (b[0][24]) q.set("p25", String(b[0][24]));
  if (b[1][24]) q.set("p0", String(-b[1][24]));
  return q;
}

async function api(path, q) {
  const r = await fetch(path + (q ? "?" + q.toString() : ""));
  const j = await r.json();
  if (!r.ok) throw new Error(j.message || JSON.stringify(j.detail));
  return j;
}

// ------------------------------------------------------------------------------------------------ drawing
const NS = "http://www.w3.org/2000/svg";
function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function pointX(p) { // left edge of point p (your numbering)
  if (p <= 6) return 360 + (6 - p) * 50;
  if (p <= 12) return 20 + (12 - p) * 50;
  if (p <= 18) return 20 + (p - 13) * 50;
  return 360 + (p - 19) * 50;
}
function drawBoard() {
  const svg = $("board");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.appendChild(el("rect", { x: 10, y: 10, width: 660, height: 500, fill: "#c9a26b", rx: 4 }));
  svg.appendChild(el("rect", { x: 320, y: 10, width: 40, height: 500, fill: "#5a3d1e" }));
  svg.appendChild(el("rect", { x: 680, y: 10, width: 70, height: 500, fill: "#5a3d1e", rx: 4 }));
  const b = S.board;
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p);
    const top = p >= 13;
    const color = p % 2 ? "#8b1a1a" : "#e8dcc0";
    const tri = top ? `${x},20 ${x + 50},20 ${x + 25},220` : `${x},500 ${x + 50},500 ${x + 25},300`;
    svg.appendChild(el("polygon", { points: tri, fill: color, stroke: "#333", "stroke-width": 0.5 }));
    svg.appendChild(el("text", { x: x + 25, y: top ? 16 : 514, "text-anchor": "middle", "font-size": 10, fill: "#222" }, String(p)));
    const mine = b[0][p - 1], theirs = b[1][24 - p];
    const n = mine || theirs;
    if (!n) continue;
    const fill = mine ? "#fafafa" : "#222";
    const cls = mine ? "checker you" : "checker bot";
    for (let k = 0; k < Math.min(n, 5); k++) {
      const cy = top ? 45 + k * 44 : 475 - k * 44;
      svg.appendChild(el("circle", { cx: x + 25, cy: cy, r: 21, fill: fill, stroke: "#555", "stroke-width": 2, class: cls }));
    }
    if (n > 5) {
      const cy = top ? 45 + 4 * 44 : 475 - 4 * 44;
      svg.appendChild(el("text", { x: x + 25, y: cy + 5, "text-anchor": "middle", "font-size": 16, fill: mine ? "#000" : "#fff" }, String(n)));
      for (let k = 5; k < n; k++) svg.appendChild(el("circle", { cx: -100, cy: -100, r: 1, class: cls })); // counted, not drawn
    }
  }
  // bars: bot's checkers in the upper half, yours in the lower half
  for (const [row, cy0, dir, fill, cls] of [[1, 200, -1, "#222", "checker bot"], [0, 320, 1, "#fafafa", "checker you"]]) {
    const n = b[row][24];
    for (let k = 0; k < n; k++) {
      svg.appendChild(el("circle", { cx: 340, cy: cy0 + dir * k * 20, r: 17, fill: fill, stroke: "#999", "stroke-width": 2, class: cls + " bar" }));
    }
  }
  // borne off
  const offYou = off(b[0]), offBot = off(b[1]);
  for (let k = 0; k < offBot; k++) svg.appendChild(el("rect", { x: 690, y: 20 + k * 12, width: 50, height: 10, fill: "#222", class: "off bot" }));
  for (let k = 0; k < offYou; k++) svg.appendChild(el("rect", { x: 690, y: 490 - k * 12, width: 50, height: 10, fill: "#fafafa", class: "off you" }));
  svg.appendChild(el("text", { x: 715, y: 262, "text-anchor": "middle", "font-size": 12, fill: "#fff" }, "off"));
  $("dice").textContent = S.dice ? `Dice: ${S.dice[0]} ${S.dice[1]}` : "";
  $("score").textContent = `You ${S.score.you} \u2013 bgai ${S.score.bot}`;
  const owner = { centred: "centred", you: "yours", bot: "bgai's" }[S.cube.owner];
  $("cube").textContent = `Cube: ${S.cube.value} (${owner})`;
}

function setStatus(text) { $("status").textContent = text; }
function setError(text) { $("error").textContent = text || ""; }
function logLine(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("log").appendChild(li);
  li.scrollIntoView({ block: "nearest" });
}
function showEvaluation(rows) {
  const tb = $("evaluation").querySelector("tbody");
  tb.innerHTML = "";
  for (const [k, v] of rows) {
    const tr = document.createElement("tr");
    const a = document.createElement("td"); a.textContent = k;
    const b = document.createElement("td"); b.textContent = v;
    tr.appendChild(a); tr.appendChild(b); tb.appendChild(tr);
  }
}
const pct = (x) => (100 * x).toFixed(1) + "%";

function setControls() {
  $("roll").disabled = S.phase !== "roll";
  $("double").disabled = !(S.phase === "roll" && S.mayDouble && S.cube.owner !== "bot");
  $("take").disabled = S.phase !== "doubled";
  $("drop").disabled = S.phase !== "doubled";
  $("resign").disabled = !(S.phase === "roll" || S.phase === "move");
  $("resign-points").disabled = $("resign").disabled;
  const moving = S.phase === "move";
  $("plays").disabled = !moving;
  $("typed").disabled = !moving;
  $("play").disabled = !moving;
  document.body.dataset.phase = S.phase;
}

// ------------------------------------------------------------------------------------------------ game flow
function finishGame(result, youWon) {
  // result: {points: 1|2|3} for a game played out, {dropped: true} when a double was dropped
  const kindPts = result.dropped ? 1 : (S.cube.owner === "centred" ? 1 : result.points); // Jacoby rule
  const pts = kindPts * S.cube.value;
  if (youWon) S.score.you += pts; else S.score.bot += pts;
  const kind = result.dropped ? "the game (double dropped)" : "a " + ["", "single game", "gammon", "backgammon"][result.points]
    + (result.resigned ? " by resignation" : "");
  const text = `${youWon ? "You win" : "bgai wins"} ${kind} (${pts} point${pts > 1 ? "s" : ""}).`;
  logLine(text);
  setStatus(text + ' Press "New game" to play again.');
  S.games += 1;
  S.phase = "over";
  S.dice = null;
  drawBoard();
  setControls();
}

async function newGame() {
  S.board = [startRow(), startRow()];
  S.cube = { value: 1, owner: "centred" };
  S.phase = "busy";
  setControls();
  setError("");
  $("log").innerHTML = "";
  let a, b;
  do { a = die(); b = die(); } while (a === b);
  logLine(`Opening roll: you ${a}, bgai ${b}.`);
  drawBoard();
  if (a > b) {
    await humanMove([a, b]);
  } else {
    await botTurn([b, a]);
  }
}

async function humanRoll() {
  if (S.phase !== "roll") return;
  await humanMove(roll());
}

async function humanMove(dice) {
  S.phase = "busy";
  setControls();
  S.dice = dice;
  drawBoard();
  try {
    const q = wildbgQuery(S.board);
    q.set("dice", `${dice[0]}${dice[1]}`);
    const r = await api("/api/plays", q);
    S.note = r.note;  // the server's wording of a roll without a play (sent with no play only)
    S.plays = r.plays.slice().sort((x, y) => (x.play < y.play ? -1 : x.play > y.play ? 1 : 0));
  } catch (e) {
    setError("server error: " + e.message);
    S.phase = "roll";
    setControls();
    return;
  }
  const sel = $("plays");
  sel.innerHTML = "";
  if (!S.plays.length) {
    logLine(`You rolled ${dice[0]}${dice[1]}: ${S.note}.`);
    await botTurn(null);
    return;
  }
  S.plays.forEach((p, i) => {
    const o = document.createElement("option");
    o.value = String(i);
    o.textContent = p.play;
    sel.appendChild(o);
  });
  sel.selectedIndex = 0;
  setStatus(`You rolled ${dice[0]}${dice[1]}: choose one of ${S.plays.length} legal play${S.plays.length > 1 ? "s" : ""}.`);
  S.phase = "move";
  setControls();
}

function cubeQuery(b, mover) {
  // /api/cube parameters for board b (from the view of `mover`, "you" or "bot", who is on roll)
  const q = wildbgQuery(b);
  if (S.cube.owner !== "centred") {
    q.set("cube_value", String(S.cube.value));
    q.set("cube_owner", S.cube.owner === mover ? "on_roll" : "opponent");
  }
  return q;
}

async function humanDouble() {
  if (S.phase !== "roll" || S.cube.owner === "bot") return;
  S.phase = "busy";
  setControls();
  let r;
  try {
    r = await api("/api/cube", cubeQuery(S.board, "you"));
  } catch (e) {
    setError("server error: " + e.message);
    S.phase = "roll";
    setControls();
    return;
  }
  if (r.take) {
    S.cube = { value: 2 * S.cube.value, owner: "bot" };
    logLine(`You double to ${S.cube.value}: bgai takes.`);
    S.mayDouble = false;
    S.phase = "roll";
    setStatus("bgai took your double. Roll the dice.");
    drawBoard();
    setControls();
  } else {
    logLine(`You double to ${2 * S.cube.value}: bgai drops.`);
    finishGame({ dropped: true }, true);
  }
}

async function humanTake(take) {
  if (S.phase !== "doubled") return;
  S.phase = "busy";
  setControls();
  if (!take) {
    logLine("You drop.");
    finishGame({ dropped: true }, false);
    return;
  }
  S.cube = { value: 2 * S.cube.value, owner: "you" };
  logLine(`You take: the cube is on ${S.cube.value}.`);
  drawBoard();
  await botMove(roll());
}

async function humanResign() {
  // you offer to resign at your turn (you are on roll); the bot accepts or rejects (bgai.analysis.resign)
  if (S.phase !== "roll" && S.phase !== "move") return;
  const points = parseInt($("resign-points").value, 10);
  const back = S.phase;
  S.phase = "busy";
  setControls();
  let r;
  try {
    const q = cubeQuery(S.board, "you");
    q.set("points", String(points));
    q.set("resigns", "on_roll");
    r = await api("/api/resign", q);
  } catch (e) {
    setError("server error: " + e.message);
    S.phase = back;
    setControls();
    return;
  }
  const kind = ["", "a single game", "a gammon", "a backgammon"][points];
  const fmt = (x) => (x === null ? "?" : r.units === "mwc" ? pct(x) : x.toFixed(3));
  showEvaluation([["your resignation", `${kind}: bgai ${r.accept ? "accepts" : "rejects"}`],
    ["bgai if it accepts", fmt(r.equity_if_accepted)], ["bgai playing on", fmt(r.equity_if_played)]]);
  if (r.accept) {
    logLine(`You resign ${kind}: bgai accepts.`);
    $("plays").innerHTML = "";
    finishGame({ points: points, resigned: true }, false);
    return;
  }
  logLine(`You resign ${kind}: bgai rejects.`);
  S.phase = back;
  setStatus(`bgai rejects your resignation: play on. ${back === "move" ? "Choose your play." : "Roll the dice."}`);
  setControls();
}

function normalise(t) { return t.trim().toLowerCase().replace(/\s+/g, " "); }

async function humanPlay() {
  if (S.phase !== "move") return;
  let choice = null;
  const typed = $("typed").value;
  if (typed.trim()) {
    const want = normalise(typed);
    choice = S.plays.find((p) => normalise(p.play) === want) || null;
    if (!choice) {
      setError(`"${typed}" is not one of your legal plays with ${S.dice[0]}${S.dice[1]} (write it as listed, e.g. "${S.plays[0].play}").`);
      return;
    }
  } else {
    const i = $("plays").selectedIndex;
    if (i < 0) { setError("choose a play first"); return; }
    choice = S.plays[i];
  }
  setError("");
  $("typed").value = "";
  S.phase = "busy";
  setControls();
  S.moves += 1;
  logLine(`You ${S.dice[0]}${S.dice[1]}: ${choice.play}`);
  S.board = choice.board.map((r) => r.slice());
  S.dice = null;
  $("plays").innerHTML = "";
  drawBoard();
  if (choice.game_over) { finishGame(choice.result, true); return; }
  await botTurn(null);
}

async function botTurn(dice) {
  // the bot's turn; `dice` given for the opening roll, else it may double first, then rolls
  S.phase = "busy";
  setControls();
  if (!dice && S.cube.owner !== "you") {
    try {
      const r = await api("/api/cube", cubeQuery(flip(S.board), "bot"));
      if (r.double) {
        logLine(`bgai doubles to ${2 * S.cube.value}.`);
        if (r.action) showEvaluation([["bgai's cube decision", r.action], ["no double", r.no_double.toFixed(3)],
          ["double/take", r.double_take.toFixed(3)], ["double/pass", r.double_pass.toFixed(3)]]);
        S.phase = "doubled";
        setStatus(`bgai doubles to ${2 * S.cube.value}: take or drop?`);
        setControls();
        return;
      }
    } catch (e) {
      setError("server error: " + e.message);
    }
  }
  await botMove(dice || roll());
}

async function botMove(dice) {
  S.phase = "busy";
  setControls();
  setStatus("bgai is thinking...");
  const botBoard = flip(S.board);
  let r;
  try {
    const q = wildbgQuery(botBoard);
    q.set("dice", `${dice[0]}${dice[1]}`);
    q.set("limit", "3");
    r = await api("/api/plays", q);
  } catch (e) {
    setError("server error: " + e.message);
    S.phase = "roll";
    setControls();
    return;
  }
  const best = r.best;
  if (!best) {
    logLine(`bgai rolled ${dice[0]}${dice[1]}: ${r.note}.`);
  } else {
    S.moves += 1;
    logLine(`bgai ${dice[0]}${dice[1]}: ${best.play}`);
    S.board = flip(best.board);
    const rows = [["bgai played", `${dice[0]}${dice[1]}: ${best.play}`]];
    if (best.probabilities) {
      const p = best.probabilities;
      rows.push(["bgai wins", pct(p.win)], ["gammon", pct(p.win_gammon)], ["backgammon", pct(p.win_backgammon)],
        ["bgai loses gammon", pct(p.lose_gammon)], ["equity", best.equity.toFixed(3)]);
    } else if (best.score !== null) {
      rows.push(["score", best.score.toFixed(3) + ` (${S.agent})`]);
    }
    if (r.plays.length > 1) rows.push(["next best", r.plays.slice(1).map((x) => x.play).join(", ")]);
    showEvaluation(rows);
  }
  S.dice = null;
  drawBoard();
  if (best && best.game_over) { finishGame(best.result, false); return; }
  S.phase = "roll";
  S.mayDouble = S.cube.owner !== "bot";
  setStatus(S.mayDouble ? "Your turn: roll the dice, or double." : "Your turn: roll the dice.");
  setControls();
}

// ------------------------------------------------------------------------------------------------ wiring
$("new").addEventListener("click", () => { newGame(); });
$("roll").addEventListener("click", () => { humanRoll(); });
$("play").addEventListener("click", () => { humanPlay(); });
$("double").addEventListener("click", () => { humanDouble(); });
$("take").addEventListener("click", () => { humanTake(true); });
$("drop").addEventListener("click", () => { humanTake(false); });
$("resign").addEventListener("click", () => { humanResign(); });
$("typed").addEventListener("keydown", (e) => { if (e.key === "Enter") humanPlay(); });
$("plays").addEventListener("dblclick", () => { humanPlay(); });

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
async function until(cond) { while (!cond()) await sleep(5); }

async function autoplay(n, stopAfter, resignAfter, resignPoints) {
  // Plays n games through the page's own buttons; your side picks random legal plays.  Once, it first types an
  // illegal play to check that it is refused.  With resignPoints, it offers to resign once, at your first turn
  // after resignAfter plays.
  let checkedIllegal = false;
  let resigned = !resignPoints;
  for (let g = 0; g < n; g++) {
    $("new").click();
    await until(() => S.phase !== "busy" && S.phase !== "idle" && S.phase !== "over" || S.games > g);
    while (S.games <= g) {
      if (stopAfter && S.moves >= stopAfter && S.phase === "move") {
        document.body.dataset.autoplayDone = "stopped";
        document.body.dataset.moves = String(S.moves);
        return;
      }
      if (!resigned && S.moves >= resignAfter && (S.phase === "roll" || S.phase === "move")) {
        resigned = true;
        $("resign-points").value = String(resignPoints);
        $("resign").click();
      } else if (S.phase === "roll") {
        if (!$("double").disabled && rand() < 0.08) $("double").click();
        else $("roll").click();
      } else if (S.phase === "doubled") {
        if (rand() < 0.75) $("take").click(); else $("drop").click();
      } else if (S.phase === "move") {
        if (!checkedIllegal) {
          $("typed").value = "24/1 24/1";
          $("play").click();
          document.body.dataset.illegalError = $("error").textContent;
          $("typed").value = "";
          checkedIllegal = true;
        }
        const sel = $("plays");
        sel.selectedIndex = Math.floor(rand() * sel.options.length);
        $("play").click();
      }
      await sleep(1);
      await until(() => S.phase !== "busy");
    }
  }
  document.body.dataset.autoplayDone = String(S.games);
  document.body.dataset.moves = String(S.moves);
}

(async () => {
  try {
    const info = await api("/api/info");
    S.agent = info.agent;
    $("agent").textContent = `agent: ${info.agent}`;
  } catch (e) {
    setError("cannot reach the bgai server: " + e.message);
  }
  drawBoard();
  setControls();
  if (params.has("autoplay")) {
    autoplay(parseInt(params.get("autoplay"), 10) || 1, parseInt(params.get("stopafter"), 10) || 0,
      parseInt(params.get("resignafter"), 10) || 0, parseInt(params.get("resign"), 10) || 0);
  }
})();
