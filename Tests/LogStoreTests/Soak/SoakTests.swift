// The soak test: several contexts on their own threads save, delete and
// fetch at random while compactions run, for a set time, against a model of
// what the store must hold; at every reopen the whole store is compared with
// the model and verified. Short in the test suite; for a long run:
//
//   LOGSTORE_SOAK_SECONDS=1800 swift test --filter SoakTests

import Foundation
@testable import LogStore
import Testing

@Suite("Soak: random work from several contexts, checked against a model")
struct SoakTests {
    static let seconds = Double(ProcessInfo.processInfo.environment["LOGSTORE_SOAK_SECONDS"] ?? "") ?? 4
    static let writers = 3

    static let model: Model = try! Model {
        Entity("Account") {
            Attribute("number", .int64, indexed: true)
            Attribute("shard", .int64, indexed: true)
            Attribute("balance", .int64)
            Attribute("note", .data)
            Relationship("owner", to: "Owner", inverse: "accounts")
        }
        Entity("Owner") {
            Attribute("name", .string, indexed: true)
            Attribute("shard", .int64)
            Relationship("accounts", to: "Account", inverse: "owner", toMany: true, deleteRule: .cascade)
        }
    }

    /// What one writer's shard must hold: its accounts by number (balance
    /// and owner's name) and its owners' names.
    struct ShardModel: Equatable {
        var accounts: [Int64: Account] = [:]
        var owners: Set<String> = []
        struct Account: Equatable { var balance: Int64; var owner: String? }
    }

    struct Tally {
        var operations = 0, saves = 0, fetches = 0, compactions = 0, reopens = 0, mismatches = 0
        static func + (a: Tally, b: Tally) -> Tally {
            Tally(operations: a.operations + b.operations, saves: a.saves + b.saves, fetches: a.fetches + b.fetches,
                  compactions: a.compactions + b.compactions, reopens: a.reopens + b.reopens, mismatches: a.mismatches + b.mismatches)
        }
    }

    @Test("Saves, deletes, fetches and compactions against a model, with reopens")
    func soak() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/soak.logstore"
            var shards = [ShardModel](repeating: ShardModel(), count: Self.writers)
            var total = Tally()
            let deadline = Date().addingTimeInterval(Self.seconds)
            let durabilities: [Durability] = [.fsyncEveryCommit, .groupCommit(window: .milliseconds(1)), .deferredToOS]
            var round = 0
            repeat {
                // Between rounds, the store closes and opens again: each
                // round uses another durability mode and compaction policy.
                let options = JournalOptions(
                    durability: durabilities[round % durabilities.count],
                    compaction: round % 2 == 0 ? .manual : .automatic(minimumJournalBytes: 64 << 10))
                let store = try Store(path: path, model: Self.model, options: options)
                total.reopens += 1
                total.mismatches += try Self.compare(store, with: shards, round: round)
                let roundEnd = min(deadline, Date().addingTimeInterval(max(1, Self.seconds / 12)))
                let results = Protected<[(Int, ShardModel, Tally)]>([])
                let failures = Protected<[String]>([])
                // Threads of their own: concurrentPerform would run only as
                // many workers at once as there are cores.
                let startingShards = shards, roundNumber = round
                let finished = DispatchGroup()
                for worker in 0...Self.writers {
                    finished.enter()
                    Thread {
                        defer { finished.leave() }
                        if worker == Self.writers {
                            var tally = Tally()
                            while Date() < roundEnd {
                                do { try store.compact(); tally.compactions += 1 } catch { failures.withLock { $0.append("compaction: \(error)") } }
                                Thread.sleep(forTimeInterval: 0.2)
                            }
                            results.withLock { $0.append((worker, ShardModel(), tally)) }
                            return
                        }
                        var random = JournalFixtures.SeededGenerator(seed: UInt64(roundNumber * 100 + worker + 1))
                        var shard = startingShards[worker]
                        var tally = Tally()
                        do {
                            try Self.work(store, shard: worker, model: &shard, until: roundEnd, random: &random, tally: &tally)
                        } catch {
                            failures.withLock { $0.append("writer \(worker): \(error)") }
                        }
                        results.withLock { $0.append((worker, shard, tally)) }
                    }.start()
                }
                finished.wait()
                for (worker, shard, tally) in results.withLock({ $0 }) {
                    if worker < Self.writers { shards[worker] = shard }
                    total = total + tally
                }
                #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
                store.close()
                let report = try StoreInspector.verify(path: path)
                #expect(report.isValid, "round \(round): verify found \(report.problems)")
                round += 1
            } while Date() < deadline
            let store = try Store(path: path, model: Self.model)
            total.reopens += 1
            total.mismatches += try Self.compare(store, with: shards, round: round)
            store.close()
            #expect(total.mismatches == 0)
            #expect(total.saves > 0 && total.compactions > 0)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            print("soak: \(Int(Self.seconds)) s, \(total.operations) operations (\(total.saves) saves, \(total.fetches) fetches checked), \(total.compactions) compactions, \(total.reopens) reopens, \(shards.reduce(0) { $0 + $1.accounts.count }) accounts live, file \(size) bytes, \(total.mismatches) mismatches")
        }
    }

    /// One writer's work on its own shard, in its own context, until `end`.
    static func work(_ store: Store, shard: Int, model: inout ShardModel, until end: Date, random: inout JournalFixtures.SeededGenerator, tally: inout Tally) throws {
        let context = store.newContext()
        let shardValue = Int64(shard)
        var nextNumber = (model.accounts.keys.max() ?? Int64(shard)) + Int64(writers)
        while Date() < end {
            tally.operations += 1
            var pending = model
            switch random.next() % 10 {
            case 0...3:
                // Insert a few accounts, sometimes with a new owner.
                var owner: ManagedObject?
                if random.next() % 3 == 0 || model.owners.isEmpty {
                    let name = "owner-\(shard)-\(nextNumber)"
                    owner = try context.insert("Owner")
                    owner!["name"] = name
                    owner!["shard"] = shardValue
                    pending.owners.insert(name)
                } else {
                    let name = model.owners.sorted()[Int(random.next() % UInt64(model.owners.count))]
                    owner = try context.fetch(FetchRequest(entityName: "Owner", predicate: try ObjectPredicate("name == %@", name))).first
                }
                for _ in 0..<(1 + random.next() % 5) {
                    let account = try context.insert("Account")
                    account["number"] = nextNumber
                    account["shard"] = shardValue
                    let balance = Int64(random.next() % 10_000)
                    account["balance"] = balance
                    account["note"] = Data(repeating: UInt8(truncatingIfNeeded: nextNumber), count: Int(random.next() % 200))
                    account["owner"] = owner
                    pending.accounts[nextNumber] = .init(balance: balance, owner: owner?["name"] as? String)
                    nextNumber += Int64(writers)
                }
            case 4...5:
                // Change some balances, found through the index.
                guard let low = model.accounts.keys.min(), let high = model.accounts.keys.max() else { continue }
                let from = low + Int64(random.next() % UInt64(high - low + 1))
                let request = FetchRequest(entityName: "Account", predicate: try ObjectPredicate("shard == %d AND number >= %d", shard, from), fetchLimit: 8)
                for account in try context.fetch(request) {
                    let number = account["number"] as! Int64
                    let balance = Int64(random.next() % 10_000)
                    account["balance"] = balance
                    pending.accounts[number]!.balance = balance
                }
            case 6:
                // Delete an account, or an owner and (cascade) its accounts.
                if random.next() % 4 == 0, let name = model.owners.sorted().first {
                    let owner = try #require(try context.fetch(FetchRequest(entityName: "Owner", predicate: try ObjectPredicate("name == %@", name))).first)
                    try context.delete(owner)
                    pending.owners.remove(name)
                    pending.accounts = pending.accounts.filter { $0.value.owner != name }
                } else if let number = model.accounts.keys.randomElement(using: &random) {
                    let account = try #require(try context.fetch(FetchRequest(entityName: "Account", predicate: try ObjectPredicate("number == %d", number))).first)
                    try context.delete(account)
                    pending.accounts[number] = nil
                }
            default:
                // Fetch the shard's accounts in a range and check them.
                let limit = Int64(random.next() % 5_000)
                let request = FetchRequest(entityName: "Account", predicate: try ObjectPredicate("shard == %d AND balance < %d", shard, limit))
                let found = Set(try context.fetch(request).map { $0["number"] as! Int64 })
                let expected = Set(model.accounts.filter { $0.value.balance < limit }.keys)
                tally.fetches += 1
                if found != expected {
                    tally.mismatches += 1
                    Issue.record("shard \(shard): balance < \(limit) fetched \(found.count) accounts, the model has \(expected.count)")
                }
                continue
            }
            try context.save()
            tally.saves += 1
            model = pending
        }
    }

    /// Compares every account and owner in the store with the models; returns the mismatches.
    static func compare(_ store: Store, with shards: [ShardModel], round: Int) throws -> Int {
        let context = store.newContext()
        var found = [ShardModel](repeating: ShardModel(), count: shards.count)
        for account in try context.fetchAll("Account") {
            let shard = Int(account["shard"] as! Int64)
            let owner = account["owner"] as? ManagedObject
            found[shard].accounts[account["number"] as! Int64] = .init(balance: account["balance"] as! Int64, owner: owner?["name"] as? String)
        }
        for owner in try context.fetchAll("Owner") {
            found[Int(owner["shard"] as! Int64)].owners.insert(owner["name"] as! String)
        }
        var mismatches = 0
        for shard in shards.indices where found[shard] != shards[shard] {
            mismatches += 1
            let missing = Set(shards[shard].accounts.keys).subtracting(found[shard].accounts.keys).count
            let extra = Set(found[shard].accounts.keys).subtracting(shards[shard].accounts.keys).count
            Issue.record("after reopen \(round), shard \(shard) differs from its model: \(missing) accounts missing, \(extra) extra, owners \(found[shard].owners.count) vs \(shards[shard].owners.count)")
        }
        return mismatches
    }
}
