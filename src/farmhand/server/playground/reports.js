// The eval reports kept under FARMHAND_HOME/eval/ (`farmhand eval --html FILE`): each
// opens in a tab of its own by the signed link the list gives (a tab sends no API key).
import { el, json } from "./api.js";

export async function listReports(node, note) {
  const { reports, folder } = await json("/api/eval/reports");
  note.textContent = reports.length ? "" : `None yet: farmhand eval --html FILE keeps a copy in ${folder}`;
  node.replaceChildren(
    ...reports.map((report) =>
      el(
        "li",
        {},
        el(
          "a",
          { class: "report", href: report.url, target: "_blank", rel: "noopener noreferrer", "data-name": report.name },
          report.title,
          el("small", { class: "muted" }, ` ${new Date(report.modified * 1000).toLocaleString()}`),
        ),
      ),
    ),
  );
}
