// Charts drawn by the harness itself, as SVG text: small panels of
// log-log line plots, one per workload, LogStore and SQLite side by side.

import Foundation

/// A line of points on a panel.
struct ChartSeries {
    var label: String
    var color: String
    var dashed = false
    var points: [(x: Double, y: Double)]
}

/// One log-log plot.
struct ChartPanel {
    var title: String
    var unit: String
    var series: [ChartSeries]
}

/// A grid of panels sharing a legend, rendered as one SVG document.
struct SVGChart {
    var title: String
    var panels: [ChartPanel]
    var columns = 3

    private static let panelWidth = 330.0, panelHeight = 230.0
    private static let left = 62.0, right = 14.0, top = 38.0, bottom = 34.0

    var svg: String {
        let rows = (panels.count + columns - 1) / columns
        let width = Double(columns) * Self.panelWidth
        // The legend, wrapped to the chart's width: each entry's place.
        var legend: [(series: ChartSeries, x: Double, y: Double)] = []
        var legendX = 10.0, legendY = 40.0
        var seen = Set<String>()
        for series in panels.flatMap(\.series) where seen.insert(series.label).inserted {
            let entryWidth = 40 + Double(series.label.count) * 6.2
            if legendX + entryWidth > width, legendX > 10 { (legendX, legendY) = (10, legendY + 16) }
            legend.append((series, legendX, legendY))
            legendX += entryWidth
        }
        let panelsTop = legendY + 16
        let height = panelsTop + Double(rows) * Self.panelHeight
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="15" font-weight="bold">\(escape(title))</text>

            """
        for (series, x, y) in legend {
            out += "<line x1=\"\(x)\" y1=\"\(y)\" x2=\"\(x + 22)\" y2=\"\(y)\" stroke=\"\(series.color)\" stroke-width=\"2.5\"\(series.dashed ? " stroke-dasharray=\"5,3\"" : "")/>"
            out += "<text x=\"\(x + 27)\" y=\"\(y + 4)\">\(escape(series.label))</text>\n"
        }
        for (index, panel) in panels.enumerated() {
            let x = Double(index % columns) * Self.panelWidth, y = panelsTop + Double(index / columns) * Self.panelHeight
            out += self.panel(panel, x: x, y: y)
        }
        return out + "</svg>\n"
    }

    private func panel(_ panel: ChartPanel, x originX: Double, y originY: Double) -> String {
        let points = panel.series.flatMap(\.points).filter { $0.x > 0 && $0.y > 0 && $0.y.isFinite }
        guard !points.isEmpty else { return "" }
        let xs = decades(points.map(\.x)), ys = decades(points.map(\.y))
        let plotLeft = originX + Self.left, plotRight = originX + Self.panelWidth - Self.right
        let plotTop = originY + Self.top, plotBottom = originY + Self.panelHeight - Self.bottom
        func px(_ value: Double) -> Double {
            xs.low == xs.high ? (plotLeft + plotRight) / 2
                : plotLeft + (log10(value) - xs.low) / (xs.high - xs.low) * (plotRight - plotLeft)
        }
        func py(_ value: Double) -> Double {
            plotBottom - (log10(value) - ys.low) / max(ys.high - ys.low, 1e-9) * (plotBottom - plotTop)
        }
        var out = "<g>\n"
        out += "<text x=\"\(originX + 8)\" y=\"\(originY + 16)\" font-weight=\"bold\">\(escape(panel.title))</text>\n"
        out += "<text x=\"\(originX + 8)\" y=\"\(originY + 29)\" fill=\"#555\">\(escape(panel.unit)), log scales</text>\n"
        out += "<rect x=\"\(plotLeft)\" y=\"\(plotTop)\" width=\"\(plotRight - plotLeft)\" height=\"\(plotBottom - plotTop)\" fill=\"none\" stroke=\"#999\"/>\n"
        for exponent in stride(from: ys.low, through: ys.high, by: 1) {
            let value = pow(10, exponent), lineY = py(value)
            out += "<line x1=\"\(plotLeft)\" y1=\"\(lineY)\" x2=\"\(plotRight)\" y2=\"\(lineY)\" stroke=\"#e4e4e4\"/>"
            out += "<text x=\"\(plotLeft - 4)\" y=\"\(lineY + 4)\" text-anchor=\"end\">\(escape(Self.tick(value)))</text>\n"
        }
        for exponent in stride(from: xs.low, through: xs.high, by: 1) {
            let value = pow(10, exponent), lineX = px(value)
            out += "<line x1=\"\(lineX)\" y1=\"\(plotTop)\" x2=\"\(lineX)\" y2=\"\(plotBottom)\" stroke=\"#e4e4e4\"/>"
            out += "<text x=\"\(lineX)\" y=\"\(plotBottom + 14)\" text-anchor=\"middle\">\(escape(Self.tick(value)))</text>\n"
        }
        out += "<text x=\"\((plotLeft + plotRight) / 2)\" y=\"\(plotBottom + 28)\" text-anchor=\"middle\" fill=\"#555\">records in the store</text>\n"
        for series in panel.series {
            let line = series.points.filter { $0.x > 0 && $0.y > 0 && $0.y.isFinite }.sorted { $0.x < $1.x }
            guard !line.isEmpty else { continue }
            let path = line.map { "\(round(px($0.x) * 10) / 10),\(round(py($0.y) * 10) / 10)" }.joined(separator: " ")
            out += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(series.color)\" stroke-width=\"2\"\(series.dashed ? " stroke-dasharray=\"5,3\"" : "")/>\n"
            if !series.dashed {
                for point in line {
                    out += "<circle cx=\"\(round(px(point.x) * 10) / 10)\" cy=\"\(round(py(point.y) * 10) / 10)\" r=\"3\" fill=\"\(series.color)\"/>"
                }
                out += "\n"
            }
        }
        return out + "</g>\n"
    }

    /// The whole decades around `values`, as exponents.
    private func decades(_ values: [Double]) -> (low: Double, high: Double) {
        let logs = values.map(log10)
        return (floor(logs.min()!), max(ceil(logs.max()!), floor(logs.min()!) + 1))
    }

    /// 1e4 as "10k", 1e-6 as "1µ": short labels for decades.
    static func tick(_ value: Double) -> String {
        let prefixes: [(Double, String)] = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
        for (scale, prefix) in prefixes where value >= scale * 0.999 {
            let scaled = value / scale
            return (scaled.rounded() == scaled ? String(Int(scaled)) : String(format: "%.1f", scaled)) + prefix
        }
        return String(format: "%g", value)
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension ScalingReport {
    static let logStoreColor = "#1f6fb4", sqliteColor = "#e07b10", limitColor = "#888888"

    /// The colours of SQLite's cases (memory budgets, Codable records), by kind.
    private static func sqliteColor(_ kind: String) -> String {
        switch kind {
        case SQLiteMemory.defaults.kind: sqliteColor
        case SQLiteMemory.pageCache(bytes: 0).kind: "#c0392b"
        case SQLiteVariantFigures.codableKind: "#b7950b"
        default: "#7d3c98"
        }
    }

    /// LogStore's line (and, where it ran on, its quiescent line) and SQLite's
    /// at each memory budget, for `value` (throughput or latency).
    private func series(_ rows: [ScalingRow], _ value: (StoreFigures) -> Double) -> [ChartSeries] {
        var series = [ChartSeries(label: "LogStore", color: Self.logStoreColor, points: rows.map { (Double($0.size), value($0.logStore)) })]
        let quiescent = rows.compactMap { row in row.quiescent.map { (Double(row.size), value($0.logStore)) } }
        if !quiescent.isEmpty {
            series.append(ChartSeries(label: "LogStore, until quiescent", color: "#5dade2", points: quiescent))
        }
        series.append(ChartSeries(label: SQLiteMemory.defaults.kind, color: Self.sqliteColor, points: rows.map { (Double($0.size), value($0.sqlite)) }))
        for kind in Self.variantKinds(rows) {
            series.append(ChartSeries(label: kind, color: Self.sqliteColor(kind), points: rows.compactMap { row in
                row.sqliteVariants.first { $0.kind == kind }.map { (Double(row.size), value($0.figures)) }
            }))
        }
        return series
    }

    /// SQLite's budgets beyond its defaults in `rows`, in the order they ran.
    private static func variantKinds(_ rows: [ScalingRow]) -> [String] {
        rows.flatMap { $0.sqliteVariants.map(\.kind) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    }

    /// Throughput against size, with the machine's limit dashed.
    var throughputChart: SVGChart {
        SVGChart(title: "Throughput against size: LogStore and SQLite (GRDB), same run; higher is better", panels: Workload.allCases.compactMap { workload in
            let rows = self.rows.filter { $0.workload == workload }
            guard !rows.isEmpty else { return nil }
            return ChartPanel(title: workload.shortTitle, unit: workload.unit, series: series(rows, \.median) + [
                ChartSeries(label: "machine limit", color: Self.limitColor, dashed: true, points: rows.map { (Double($0.size), $0.limit) }),
            ])
        })
    }

    /// Seconds per operation against size.
    var latencyChart: SVGChart {
        SVGChart(title: "Latency against size: seconds per operation; lower is better", panels: Workload.allCases.compactMap { workload in
            let rows = self.rows.filter { $0.workload == workload }
            guard !rows.isEmpty else { return nil }
            return ChartPanel(title: workload.shortTitle, unit: "seconds per \(workload.operation)", series: series(rows, \.latency))
        })
    }

    /// Peak memory, resident bytes per record and file bytes per record.
    var memoryChart: SVGChart {
        func panel(_ title: String, _ unit: String, _ logStore: (MemoryRow) -> Double, _ sqlite: (MemoryRow) -> Double) -> ChartPanel {
            ChartPanel(title: title, unit: unit, series: [
                ChartSeries(label: "LogStore", color: Self.logStoreColor, points: memory.map { (Double($0.size), logStore($0)) }),
                ChartSeries(label: "SQLite", color: Self.sqliteColor, points: memory.map { (Double($0.size), sqlite($0)) }),
            ])
        }
        return SVGChart(title: "Memory and file size against size; lower is better", panels: [
            panel("peak resident memory, inserting in one save", "bytes", { Double($0.logStorePeakInsert) }, { Double($0.sqlitePeakInsert) }),
            panel("peak resident memory, LogStore importing by BatchInsertRequest", "bytes", { Double($0.logStorePeakBatchImport) }, { Double($0.sqlitePeakInsert) }),
            panel("resident memory after open + first query", "bytes per record", \.logStoreResidentPerRecord, \.sqliteResidentPerRecord),
            panel("file size", "bytes per record", \.logStoreFilePerRecord, \.sqliteFilePerRecord),
        ] + residentPanels)
    }

    /// Each read workload's resident memory after it ran, per engine and budget.
    private var residentPanels: [ChartPanel] {
        Workload.allCases.compactMap { workload in
            let rows = self.rows.filter { $0.workload == workload && $0.logStoreResident != nil }
            guard !rows.isEmpty else { return nil }
            var series = [
                ChartSeries(label: "LogStore", color: Self.logStoreColor, points: rows.map { (Double($0.size), Double($0.logStoreResident?.added ?? 0)) }),
                ChartSeries(label: SQLiteMemory.defaults.kind, color: Self.sqliteColor, points: rows.map { (Double($0.size), Double($0.sqliteResident?.added ?? 0)) }),
            ]
            for kind in Self.variantKinds(rows) {
                series.append(ChartSeries(label: kind, color: Self.sqliteColor(kind), points: rows.compactMap { row in
                    row.sqliteVariants.first { $0.kind == kind }.map { (Double(row.size), Double($0.resident?.added ?? 0)) }
                }))
            }
            return ChartPanel(title: "resident after \(workload.shortTitle)", unit: "bytes the store added", series: series)
        }
    }
}
