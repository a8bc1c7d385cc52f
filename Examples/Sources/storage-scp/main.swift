// storage-scp PORT FOLDER [COUNT]: a storage SCP (C-STORE) that files what it receives under FOLDER and
// prints each event as px-listen does; it stops after COUNT instances (or runs until it is killed).
//
//     storage-scp 11112 /data/incoming 10
import PX

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, let port = Int(arguments[0]) else {
    fatalError("usage: storage-scp PORT FOLDER [COUNT]")
}
let count = arguments.count > 2 ? Int(arguments[2]) : nil

var received = 0
events: for try await event in PX.listen(port: port, aeTitle: "PXLISTEN", into: arguments[1]) {
    // The handler: every event (listening, associationOpened, instanceReceived, seriesComplete, ...).
    print(PX.json(event))
    switch event {
    case .instanceReceived: received += 1
    // Leaving the loop stops the SCP: once COUNT instances are in, at the end of their association.
    case .associationClosed where count.map { received >= $0 } ?? false: break events
    default: break
    }
}
