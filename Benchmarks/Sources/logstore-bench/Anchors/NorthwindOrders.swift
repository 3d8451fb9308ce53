// Anchor 3, Lighter's fetch test: load a 15,889-row table with the shape of
// Northwind's Orders (14 columns) 500 times, as objects or records. The rows
// are generated, from a seed: the original data set is not redistributed here.

import Foundation
import GRDB
import LogStore

/// An order as a LogStore object.
final class NorthwindOrder: ManagedObject {
    @Managed("orderID") var orderID: Int64
    @Managed("customerID") var customerID: String?
    @Managed("employeeID") var employeeID: Int64
    @Managed("orderDate") var orderDate: Date?
    @Managed("requiredDate") var requiredDate: Date?
    @Managed("shippedDate") var shippedDate: Date?
    @Managed("shipVia") var shipVia: Int64
    @Managed("freight") var freight: Double
    @Managed("shipName") var shipName: String?
    @Managed("shipAddress") var shipAddress: String?
    @Managed("shipCity") var shipCity: String?
    @Managed("shipRegion") var shipRegion: String?
    @Managed("shipPostalCode") var shipPostalCode: String?
    @Managed("shipCountry") var shipCountry: String?

    var values: OrderRecord {
        OrderRecord(orderID: orderID, customerID: customerID ?? "", employeeID: employeeID, orderDate: orderDate ?? .distantPast,
                    requiredDate: requiredDate ?? .distantPast, shippedDate: shippedDate ?? .distantPast, shipVia: shipVia,
                    freight: freight, shipName: shipName ?? "", shipAddress: shipAddress ?? "", shipCity: shipCity ?? "",
                    shipRegion: shipRegion, shipPostalCode: shipPostalCode ?? "", shipCountry: shipCountry ?? "")
    }

    func fill(_ order: OrderRecord) {
        (orderID, customerID, employeeID, orderDate, requiredDate) = (order.orderID, order.customerID, order.employeeID, order.orderDate, order.requiredDate)
        (shippedDate, shipVia, freight, shipName, shipAddress) = (order.shippedDate, order.shipVia, order.freight, order.shipName, order.shipAddress)
        (shipCity, shipRegion, shipPostalCode, shipCountry) = (order.shipCity, order.shipRegion, order.shipPostalCode, order.shipCountry)
    }
}

/// An order as a GRDB record, decoded by column index (the hand-written
/// mapping of Lighter's test); dates are REAL seconds since the reference date.
struct OrderRecord: Codable, FetchableRecord {
    var orderID: Int64
    var customerID: String
    var employeeID: Int64
    var orderDate: Date
    var requiredDate: Date
    var shippedDate: Date
    var shipVia: Int64
    var freight: Double
    var shipName: String
    var shipAddress: String
    var shipCity: String
    var shipRegion: String?
    var shipPostalCode: String
    var shipCountry: String
}

extension OrderRecord {
    init(row: Row) {
        (orderID, customerID, employeeID) = (row[0], row[1], row[2])
        orderDate = Date(timeIntervalSinceReferenceDate: row[3])
        requiredDate = Date(timeIntervalSinceReferenceDate: row[4])
        shippedDate = Date(timeIntervalSinceReferenceDate: row[5])
        (shipVia, freight, shipName, shipAddress, shipCity) = (row[6], row[7], row[8], row[9], row[10])
        (shipRegion, shipPostalCode, shipCountry) = (row[11], row[12], row[13])
    }

    var arguments: StatementArguments {
        [orderID, customerID, employeeID, orderDate.timeIntervalSinceReferenceDate, requiredDate.timeIntervalSinceReferenceDate,
         shippedDate.timeIntervalSinceReferenceDate, shipVia, freight, shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry]
    }
}

/// The same record decoded by Codable, the other GRDB variant Lighter published.
struct CodableOrderRecord: Codable, FetchableRecord {
    var order: OrderRecord

    init(from decoder: any Decoder) throws { order = try OrderRecord(from: decoder) }
    func encode(to encoder: any Encoder) throws { try order.encode(to: encoder) }

    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSinceReferenceDate }
}

enum NorthwindOrders {
    static let columns = ["orderID", "customerID", "employeeID", "orderDate", "requiredDate", "shippedDate", "shipVia", "freight",
                          "shipName", "shipAddress", "shipCity", "shipRegion", "shipPostalCode", "shipCountry"]
    static let schema = ["""
        CREATE TABLE IF NOT EXISTS orders (
            orderID INTEGER PRIMARY KEY, customerID TEXT NOT NULL, employeeID INTEGER NOT NULL,
            orderDate REAL NOT NULL, requiredDate REAL NOT NULL, shippedDate REAL NOT NULL, shipVia INTEGER NOT NULL,
            freight REAL NOT NULL, shipName TEXT NOT NULL, shipAddress TEXT NOT NULL, shipCity TEXT NOT NULL,
            shipRegion TEXT, shipPostalCode TEXT NOT NULL, shipCountry TEXT NOT NULL)
        """]
    static let selectSQL = "SELECT \(columns.joined(separator: ", ")) FROM orders ORDER BY orderID"
    static let request = FetchRequest(entityName: "Order")
    static let cities = [("Reims", "France", nil), ("Münster", "Germany", nil), ("Rio de Janeiro", "Brazil", "RJ"), ("Lyon", "France", nil),
                         ("Charleroi", "Belgium", nil), ("Bern", "Switzerland", nil), ("Genève", "Switzerland", nil), ("Resende", "Brazil", "SP"),
                         ("San Cristóbal", "Venezuela", "Táchira"), ("Graz", "Austria", nil), ("México D.F.", "Mexico", nil),
                         ("Köln", "Germany", nil), ("Albuquerque", "USA", "NM"), ("Eugene", "USA", "OR"), ("Cork", "Ireland", "Co. Cork")]

    static func model() throws -> Model {
        try Model {
            Entity("Order", NorthwindOrder.self) {
                Attribute("orderID", .int64, default: Int64(0))
                Attribute("customerID", .string)
                Attribute("employeeID", .int64, default: Int64(0))
                Attribute("orderDate", .date)
                Attribute("requiredDate", .date)
                Attribute("shippedDate", .date)
                Attribute("shipVia", .int64, default: Int64(0))
                Attribute("freight", .double, default: 0.0)
                Attribute("shipName", .string)
                Attribute("shipAddress", .string)
                Attribute("shipCity", .string)
                Attribute("shipRegion", .string)
                Attribute("shipPostalCode", .string)
                Attribute("shipCountry", .string)
            }
        }
    }

    /// `count` orders from 10248 on, as Northwind numbers them; dates to the millisecond, freight in cents.
    static func make(_ count: Int, seed: UInt64) -> [OrderRecord] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            let ordered = 5.0e8 + Double(index) * 5_400 + Double(random.next() % 3_600_000) / 1000
            let (city, country, region) = cities[Int(random.next() % UInt64(cities.count))]
            return OrderRecord(
                orderID: 10_248 + Int64(index), customerID: random.code(5), employeeID: Int64(1 + random.next() % 9),
                orderDate: Date(timeIntervalSinceReferenceDate: ordered),
                requiredDate: Date(timeIntervalSinceReferenceDate: ordered + 28 * 86_400),
                shippedDate: Date(timeIntervalSinceReferenceDate: ordered + Double(random.next() % 2_592_000_000) / 1000),
                shipVia: Int64(1 + random.next() % 3), freight: Double(1 + random.next() % 100_000) / 100 + 0.005,
                shipName: random.phrase(3, from: inventoryWords), shipAddress: "\(random.next() % 999) " + random.phrase(2, from: inventoryWords),
                shipCity: city, shipRegion: region, shipPostalCode: random.code(5), shipCountry: country)
        }
    }

    static func digest(_ orders: [OrderRecord]) -> ResultDigest {
        var digest = ResultDigest()
        for order in orders {
            for number in [order.orderID, order.employeeID, order.shipVia] { digest.add(number) }
            for date in [order.orderDate, order.requiredDate, order.shippedDate] { digest.add(date.timeIntervalSinceReferenceDate) }
            digest.add(order.freight)
            for text in [order.customerID, order.shipName, order.shipAddress, order.shipCity, order.shipRegion ?? "(null)", order.shipPostalCode, order.shipCountry] {
                digest.add(text)
            }
        }
        return digest
    }

    static func run(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let rows = 15_889
        let loads = context.scaled(full: 500, quick: 5)
        let orders = make(rows, seed: 10_248)
        let expected = digest(orders)
        let model = try model()
        context.log("anchors: load \(rows.formatted()) orders \(loads) times")
        let insertSQL = "INSERT INTO orders (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        let data = try Anchor.ReadDataSet("anchor-orders", model: model, schema: schema, context,
                                          fill: { objects in for order in orders { try objects.insert(NorthwindOrder.self).fill(order) } },
                                          insert: { db in
                                              let statement = try db.cachedStatement(sql: insertSQL)
                                              for order in orders { try statement.execute(arguments: order.arguments) }
                                          })
        defer { data.remove(context) }
        let store = data.store
        func grdbRead(_ name: String, _ reader: any DatabaseReader, codable: Bool) -> Anchor.Read {
            let fetch = {
                try reader.read { db in
                    let statement = try db.cachedStatement(sql: selectSQL)
                    return codable ? try CodableOrderRecord.fetchAll(statement).map(\.order) : try OrderRecord.fetchAll(statement)
                }
            }
            return Anchor.Read(name: name, load: { keep(try fetch().count) }, digest: { digest(try fetch()) })
        }
        let seconds = try Anchor.measure([
            Anchor.Read(name: "LogStore fetch", load: { keep(try store.newContext().fetch(request).count) },
                        digest: { digest(try store.newContext().fetch(request, as: NorthwindOrder.self).map(\.values)) }),
            grdbRead("GRDB init(row:), defaults", data.database, codable: false),
            grdbRead("GRDB init(row:), large cache", data.cached, codable: false),
        ], loads: loads, expected: expected, repetitions: context.repetitions)
        // Codable is four times slower than the rest: a tenth of the loads,
        // scaled to the same count, keeps the group's run time in bounds.
        let codableLoads = max(1, loads / 10)
        let codableSeconds = try Anchor.measure([grdbRead("GRDB Codable, defaults", data.database, codable: true)],
                                                loads: codableLoads, expected: expected, repetitions: context.repetitions)[0]
            .map { $0 * Double(loads) / Double(codableLoads) }
        let label = "load \(rows.formatted()) orders × \(loads)"
        let logStore = report.addSeconds("\(label) as objects: LogStore", seconds[0])
        let grdb = report.addSeconds("\(label) as records, init(row:): GRDB, SQLite defaults", seconds[1])
        let grdbCached = report.addSeconds("\(label) as records, init(row:): GRDB, page cache ≥ 2 × database, warmed", seconds[2])
        let grdbCodable = report.addSeconds("\(label) as Codable records: GRDB, SQLite defaults (timed over \(codableLoads) loads, scaled)", codableSeconds)
        report.compareTimes(label + ", init(row:), SQLite defaults", grdb: grdb, logStore: logStore)
        report.compareTimes(label + ", init(row:), large page cache", grdb: grdbCached, logStore: logStore)
        report.compareTimes(label + ", Codable", grdb: grdbCodable, logStore: logStore)
        report.note("orders: a generated table with Northwind's Orders columns (ids, customer codes, three dates to the millisecond, freight in cents plus half a cent, ship names and addresses, a region that is NULL for most cities); Lighter's test read the populated Northwind database, whose dates are TEXT and whose Freight its GRDB records decode as Decimal")
        report.published("Lighter PerformanceTestSuite, Orders.fetchAll × 500 (15,889 rows)",
                         "Enlighter-generated SQLite bindings 6.629 s, Lighter 7.927 s, GRDB 5.26 hand-written mapping ~12 s, GRDB Codable 49.404 s, SQLite.swift hand-written 30.643 s, SQLite.swift Codable 153.172 s (M1 Mac mini; github.com/Lighter-swift/PerformanceTestSuite README.md)")
    }
}
