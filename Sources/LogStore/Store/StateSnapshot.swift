// A fetch's view of the committed state.

/// The store's committed state at one moment, shared by the records of one
/// fetch. Taking it copies no records: the state's arrays are copied on
/// write, so a save during the fetch does not disturb it.
final class StateSnapshot {
    let state: CommittedState
    let model: Model

    init(state: CommittedState, model: Model) {
        self.state = state
        self.model = model
    }
}
