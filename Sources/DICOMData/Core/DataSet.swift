/// A DICOM data set: data elements in ascending tag order (PS3.5 §7).
///
/// A data set knows its Specific Character Set: the one its own (0008,0005) names, or for a nested
/// item, the one it inherits from the data set that contains it (PS3.5 §7.5.3).
public struct DataSet: Sendable {
    /// The elements, ascending by tag.
    public private(set) var elements: [DataElement]
    /// The character set that decodes this data set's text values.
    public private(set) var characterSet: SpecificCharacterSet
    /// The character set inherited from an enclosing data set, used while this one has no (0008,0005).
    private var inheritedCharacterSet: SpecificCharacterSet

    /// An empty data set.
    public init(inheriting characterSet: SpecificCharacterSet = .defaultRepertoire) {
        self.elements = []
        self.characterSet = characterSet
        self.inheritedCharacterSet = characterSet
    }

    /// A data set from elements; they are sorted by tag, and a later element replaces an earlier one
    /// with the same tag.
    public init(_ elements: [DataElement], inheriting characterSet: SpecificCharacterSet = .defaultRepertoire) {
        self.init(inheriting: characterSet)
        if elements.isSorted() {
            self.elements = elements
            updateCharacterSet()
        } else {
            for element in elements { set(element) }
        }
    }

    /// Elements already in ascending, unique tag order, as the reader produces them.
    init(sortedElements: [DataElement], inheriting characterSet: SpecificCharacterSet) {
        self.elements = sortedElements
        self.characterSet = characterSet
        self.inheritedCharacterSet = characterSet
        updateCharacterSet()
    }

    public var count: Int { elements.count }
    public var isEmpty: Bool { elements.isEmpty }

    /// The element with a tag, if present.
    public subscript(tag: Tag) -> DataElement? {
        guard let i = index(of: tag) else { return nil }
        return elements[i]
    }

    public func contains(_ tag: Tag) -> Bool { index(of: tag) != nil }

    /// Inserts an element, or replaces the one with the same tag.
    public mutating func set(_ element: DataElement) {
        let i = insertionIndex(for: element.tag)
        if i < elements.count, elements[i].tag == element.tag {
            elements[i] = element
        } else {
            elements.insert(element, at: i)
        }
        if element.tag == .specificCharacterSet { updateCharacterSet() }
    }

    /// Removes the element with a tag; returns it if it was there.
    @discardableResult
    public mutating func remove(_ tag: Tag) -> DataElement? {
        guard let i = index(of: tag) else { return nil }
        let removed = elements.remove(at: i)
        if tag == .specificCharacterSet { updateCharacterSet() }
        return removed
    }

    /// Removes the elements for which the predicate is true.
    public mutating func removeAll(where predicate: (DataElement) -> Bool) {
        elements.removeAll(where: predicate)
        updateCharacterSet()
    }

    /// Makes this data set inherit a character set (for an item placed in a sequence).
    public mutating func inherit(_ characterSet: SpecificCharacterSet) {
        inheritedCharacterSet = characterSet
        updateCharacterSet()
    }

    private mutating func updateCharacterSet() {
        if let element = self[.specificCharacterSet], !element.bytes.isEmpty {
            characterSet = SpecificCharacterSet(terms: DataSet.splitCharacterSetTerms(element.bytes))
        } else {
            characterSet = inheritedCharacterSet
        }
    }

    /// The values of (0008,0005), split on backslash and trimmed; an empty first value is kept,
    /// since it means "the default repertoire in G0" for ISO 2022 (PS3.3 §C.12.1.1.2).
    static func splitCharacterSetTerms(_ bytes: ArraySlice<UInt8>) -> [String] {
        bytes.split(separator: 0x5C, omittingEmptySubsequences: false).map { part in
            String(decoding: part, as: UTF8.self).trimmingSpacesAndNUL()
        }
    }

    @inlinable
    func index(of tag: Tag) -> Int? {
        let i = insertionIndex(for: tag)
        return i < elements.count && elements[i].tag == tag ? i : nil
    }

    @inlinable
    func insertionIndex(for tag: Tag) -> Int {
        var low = 0
        var high = elements.count
        while low < high {
            let mid = (low + high) / 2
            if elements[mid].tag < tag { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension DataSet: Sequence {
    public func makeIterator() -> IndexingIterator<[DataElement]> { elements.makeIterator() }
}

extension [DataElement] {
    fileprivate func isSorted() -> Bool {
        var previous: Tag?
        for e in self {
            if let p = previous, !(p < e.tag) { return false }
            previous = e.tag
        }
        return true
    }
}

extension String {
    /// The string without leading and trailing spaces and NULs.
    func trimmingSpacesAndNUL() -> String {
        var s = Substring(self)
        while let c = s.last, c == " " || c == "\0" { s.removeLast() }
        while let c = s.first, c == " " || c == "\0" { s.removeFirst() }
        return String(s)
    }
}

extension DataSet {
    /// The same data set with its values copied into one buffer of their own, just their bytes.
    ///
    /// A data set read from bytes shares them: each value is a slice of the buffer it was read from, and
    /// keeps all of that buffer alive (the first MiB of a received file, which for a CT image is the whole
    /// image, when only a header of a few KiB is wanted). Keep the compacted copy of a data set that
    /// outlives the bytes it was read from.
    public func compacted() -> DataSet {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(self.valueBytes)
        self.appendValues(to: &buffer)
        var offset = 0
        return self.rebuilt(from: buffer, offset: &offset)
    }

    /// The bytes of all values, those of nested items and encapsulated fragments included: what
    /// ``compacted()`` holds.
    public var valueBytes: Int {
        var total = 0
        for element in self.elements {
            switch element.value {
            case .bytes(let bytes): total += bytes.count
            case .sequence(let items): for item in items { total += item.dataSet.valueBytes }
            case .fragments(let pixels):
                total += pixels.basicOffsetTable.count + pixels.fragments.reduce(0) { $0 + $1.count }
            }
        }
        return total
    }

    private func appendValues(to buffer: inout [UInt8]) {
        for element in self.elements {
            switch element.value {
            case .bytes(let bytes): buffer.append(contentsOf: bytes)
            case .sequence(let items): for item in items { item.dataSet.appendValues(to: &buffer) }
            case .fragments(let pixels):
                buffer.append(contentsOf: pixels.basicOffsetTable)
                for fragment in pixels.fragments { buffer.append(contentsOf: fragment) }
            }
        }
    }

    /// This data set with each value a slice of `buffer` from `offset` on, in the order of
    /// ``appendValues(to:)``.
    private func rebuilt(from buffer: [UInt8], offset: inout Int) -> DataSet {
        func take(_ count: Int) -> ArraySlice<UInt8> {
            defer { offset += count }
            return buffer[offset..<(offset + count)]
        }
        var elements: [DataElement] = []
        elements.reserveCapacity(self.elements.count)
        for element in self.elements {
            var copy = element
            switch element.value {
            case .bytes(let bytes): copy.value = .bytes(take(bytes.count))
            case .sequence(let items):
                var rebuiltItems: [Item] = []
                for item in items {
                    rebuiltItems.append(
                        Item(
                            dataSet: item.dataSet.rebuilt(from: buffer, offset: &offset),
                            hasUndefinedLength: item.hasUndefinedLength))
                }
                copy.value = .sequence(rebuiltItems)
            case .fragments(let pixels):
                let table = take(pixels.basicOffsetTable.count)
                copy.value = .fragments(
                    EncapsulatedPixelData(basicOffsetTable: table, fragments: pixels.fragments.map { take($0.count) }))
            }
            elements.append(copy)
        }
        var rebuilt = self
        rebuilt.elements = elements
        return rebuilt
    }
}

extension Part10File {
    /// The same file with its meta information and data set ``DataSet/compacted()``: it no longer keeps
    /// alive the bytes it was read from.
    public func compacted() -> Part10File {
        var copy = self
        copy.meta = self.meta.compacted()
        copy.dataSet = self.dataSet.compacted()
        return copy
    }
}
