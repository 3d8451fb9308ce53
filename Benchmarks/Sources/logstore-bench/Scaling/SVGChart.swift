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
        let width = Double(columns) * Self.panelWidth, height = 56 + Double(rows) * Self.panelHeight
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="15" font-weight="bold">\(escape(title))</text>

            """
        var legendX = 10.0
        var seen = Set<String>()
        for series in panels.flatMap(\.series) where seen.insert(series.label).inserted {
            out += "<line x1=\"\(legendX)\" y1=\"40\" x2=\"\(legendX + 22)\" y2=\"40\" stroke=\"\(series.color)\" stroke-width=\"2.5\"\(series.dashed ? " stroke-dasharray=\"5,3\"" : "")/>"
            out += "<text x=\"\(legendX + 27)\" y=\"44\">\(escape(series.label))</text>\n"
            legendX += 40 + Double(series.label.count) * 6.2
        }
        for (index, panel) in panels.enumerated() {
            let x = Double(index % columns) * Self.panelWidth, y = 56 + Double(index / columns) * Self.panelHeight
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

    /// Throughput against size, with the machine's limit dashed.
    var throughputChart: SVGChart {
        SVGChart(title: "Throughput against size: LogStore and SQLite (GRDB), same run; higher is better", panels: Workload.allCases.compactMap { workload in
            let rows = self.rows.filter { $0.workload == workload }
            guard !rows.isEmpty else { return nil }
            return ChartPanel(title: workload.shortTitle, unit: workload.unit, series: [
                ChartSeries(label: "LogStore", color: Self.logStoreColor, points: rows.map { (Double($0.size), $0.logStore.median) }),
                ChartSeries(label: "SQLite", color: Self.sqliteColor, points: rows.map { (Double($0.size), $0.sqlite.median) }),
                ChartSeries(label: "machine limit", color: Self.limitColor, dashed: true, points: rows.map { (Double($0.size), $0.limit) }),
            ])
        })
    }

    /// Seconds per operation against size.
    var latencyChart: SVGChart {
        SVGChart(title: "Latency against size: seconds per operation; lower is better", panels: Workload.allCases.compactMap { workload in
            let rows = self.rows.filter { $0.workload == workload }
            guard !rows.isEmpty else { return nil }
            return ChartPanel(title: workload.shortTitle, unit: "seconds per \(workload.operation)", series: [
                ChartSeries(label: "LogStore", color: Self.logStoreColor, points: rows.map { (Double($0.size), $0.logStore.latency) }),
                ChartSeries(label: "SQLite", color: Self.sqliteColor, points: rows.map { (Double($0.size), $0.sqlite.latency) }),
            ])
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
            panel("resident memory after open + first query", "bytes per record", \.logStoreResidentPerRecord, \.sqliteResidentPerRecord),
            panel("file size", "bytes per record", \.logStoreFilePerRecord, \.sqliteFilePerRecord),
        ])
    }
}
